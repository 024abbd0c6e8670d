"""The approval card's preflight asks what CSB's `check-infra` asks before a local launch: the Docker
daemon answers (when Harbor's environment is Docker) and `runs/` has more than 5 GB free (20 GB
recommended). A daemon that accepts and never answers blocks with that cause, within its time limit."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from csb_tree import build_tree

from bot.csb import Catalog, PreflightCheck, PreflightReport, run_preflight
from bot.csb.disk_space import DiskSpace, disk_space
from bot.domain.redact import Redactor
from bot.domain.spec import RunParams

ENV = {"SOURCEGRAPH_ACCESS_TOKEN": "sgp_secret-token-value"}


async def _preflight(
    repo: Path, env: dict[str, str], *, docker: bool, docker_ping_s: float = 10
) -> PreflightReport:
    spec = Catalog(repo).resolve(RunParams(), default_parallel=4)
    return await run_preflight(
        repo,
        spec,
        env,
        daytona=False,
        timeout_s=60,
        redact=Redactor.from_env(env),
        python=sys.executable,
        docker=docker,
        docker_ping_s=docker_ping_s,
    )


def _finding(report: PreflightReport, check: PreflightCheck):  # type: ignore[no-untyped-def]
    return next(finding for finding in report.findings if finding.check == check)


@pytest.fixture
def silent_docker(tmp_path: Path) -> Iterator[str]:
    path = tmp_path / "docker.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(8)
        yield f"unix://{path}"


async def test_a_docker_daemon_that_does_not_answer_blocks_with_that_cause(
    tmp_path: Path, silent_docker: str
) -> None:
    """Within `[engine] docker_ping_sec`, shortened here: CSB's 10 s would be a wait, not a proof."""
    env = {**ENV, "DOCKER_HOST": silent_docker}
    report = await _preflight(build_tree(tmp_path), env, docker=True, docker_ping_s=0.5)
    docker = _finding(report, PreflightCheck.DOCKER)
    assert docker.blocking
    assert docker.message == f"Docker daemon is not running: {silent_docker} did not answer in 0.5 s"
    assert docker.message in report.blocking_reasons


async def test_a_docker_daemon_that_answers_passes(tmp_path: Path, docker_daemon: str) -> None:
    report = await _preflight(build_tree(tmp_path), {**ENV, "DOCKER_HOST": docker_daemon}, docker=True)
    docker = _finding(report, PreflightCheck.DOCKER)
    assert (docker.ok, docker.blocking, docker.message) == (True, False, "Docker daemon answers")


async def test_docker_is_not_asked_when_harbor_does_not_use_it(tmp_path: Path, silent_docker: str) -> None:
    report = await _preflight(build_tree(tmp_path), {**ENV, "DOCKER_HOST": silent_docker}, docker=False)
    docker = _finding(report, PreflightCheck.DOCKER)
    assert (docker.skipped, docker.blocking, docker.message) == (True, False, "Docker not used")
    disk = _finding(report, PreflightCheck.DISK)
    assert " GB free under " in disk.message and not disk.blocking


@pytest.mark.parametrize(
    ("free_gb", "blocking", "low", "words"),
    [
        (4.9, True, True, "only 4.9 GB free under /r/runs; CSB needs more than 5 GB to launch"),
        (12.0, False, True, "12.0 GB free under /r/runs; CSB recommends 20 GB"),
        (80.0, False, False, "80.0 GB free under /r/runs"),
    ],
)
def test_csb_s_disk_thresholds(free_gb: float, blocking: bool, low: bool, words: str) -> None:
    space = DiskSpace(where=Path("/r/runs"), free_gb=free_gb)
    assert (space.blocking, space.low, space.describe()) == (blocking, low, words)


def test_disk_is_measured_under_runs_when_it_exists(tmp_path: Path) -> None:
    assert disk_space(tmp_path).where == tmp_path
    (tmp_path / "runs").mkdir()
    measured = disk_space(tmp_path)
    assert measured.where == tmp_path / "runs" and measured.free_gb > 0
