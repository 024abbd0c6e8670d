"""A hostile checkout: task ids and folders from its suite file never make the bot write, move or delete
anything outside the run's own folder, and a suite file with such an entry is refused where it is read.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from store_reads import request_count
from test_e2e_run import card_text, labels

from bot.csb.paths import LaunchPaths, inside, lane_path, run_folder
from bot.csb.task_copy import SG_ONLY, copy_path, lane_task_path, remove_copy
from bot.domain.errors import InfraError
from bot.domain.spec import LaneRole
from bot.engine.attempts import retire_attempt
from bot.playground import REQUESTER

LANE_DIR = "runs/staging/fix_haiku_20260101_000000_1/mcp-remote-direct"


def _checkout(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout with one task that ships the sg_only Dockerfile, and a folder beside it to protect."""
    repo = tmp_path / "csb"
    task = repo / "benchmarks/tasks/s/t"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / SG_ONLY).write_text("FROM scratch\n")
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu\n")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    return repo, victim


@pytest.mark.parametrize("task_id", ["../../../../../../victim", "../../../../../..", "a/../../b", "a\\b"])
def test_a_task_copy_is_never_named_outside_its_folder(tmp_path: Path, task_id: str) -> None:
    with pytest.raises(InfraError, match="refused"):
        copy_path(LaneRole.MCP, "mcp-remote-direct", task_id, "marker", root=tmp_path / "copies")


def test_removing_a_copy_never_follows_a_symlink_out(tmp_path: Path) -> None:
    _, victim = _checkout(tmp_path)
    copies = tmp_path / "copies"
    copies.mkdir()
    (copies / "mcp_t_abcdef").symlink_to(victim)
    remove_copy(copies / "mcp_t_abcdef")
    assert (victim / "precious.txt").read_text() == "keep me"


def test_a_task_folder_outside_the_checkout_is_not_copied(tmp_path: Path) -> None:
    repo, victim = _checkout(tmp_path)
    copy = copy_path(LaneRole.MCP, "mcp-remote-direct", "victim", "marker", root=tmp_path / "copies")
    with pytest.raises(InfraError, match="refused"):
        lane_task_path(LaunchPaths(repo), "../victim", LaneRole.MCP, "mcp-remote-direct", copy)
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]


def test_the_ordinary_copy_swaps_in_the_variant(tmp_path: Path) -> None:
    repo, _ = _checkout(tmp_path)
    copy = copy_path(LaneRole.MCP, "mcp-remote-direct", "t", "marker", root=tmp_path / "copies")
    paths = LaunchPaths(repo)
    assert lane_task_path(paths, "benchmarks/tasks/s/t", LaneRole.MCP, "mcp-remote-direct", copy) == str(copy)
    assert (copy / "environment" / "Dockerfile").read_text() == "FROM scratch\n"
    assert (repo / "benchmarks/tasks/s/t/environment/Dockerfile").read_text() == "FROM ubuntu\n"


def test_an_earlier_attempt_is_never_moved_outside_the_run_folder(tmp_path: Path) -> None:
    repo, victim = _checkout(tmp_path)
    (repo / LANE_DIR).mkdir(parents=True)
    (repo / LANE_DIR / "t.log").write_text("attempt 1\n")
    with pytest.raises(InfraError, match="refused"):
        retire_attempt(repo, LANE_DIR, f"{LANE_DIR}/t.log", "../../../../../../victim/x", 1, None)
    with pytest.raises(InfraError, match="refused"):
        retire_attempt(repo, LANE_DIR, "../victim/precious.txt", "t", 1, None)
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert (repo / LANE_DIR / "t.log").is_file()


@pytest.mark.parametrize(
    "jobs_dir",
    ["runs/staging/r/../../..", "runs/staging/../x", "tmp/a/b/c", "runs/staging/r", "/runs/staging/r/c"],
)
def test_a_jobs_dir_of_another_shape_is_refused(tmp_path: Path, jobs_dir: str) -> None:
    with pytest.raises(InfraError, match="refused"):
        run_folder(tmp_path, jobs_dir)


def test_inside_allows_only_strictly_inside(tmp_path: Path) -> None:
    assert inside(tmp_path, tmp_path / "a" / ".." / "b") == (tmp_path / "b").resolve()
    for path in (tmp_path, tmp_path / "..", tmp_path / "a" / ".." / ".."):
        with pytest.raises(InfraError):
            inside(tmp_path, path)
    assert lane_path(tmp_path, LANE_DIR, f"{LANE_DIR}/x.log").name == "x.log"


def test_a_launch_batch_checks_each_lane_path_though_it_resolves_shared_folders_once(tmp_path: Path) -> None:
    """A batch resolves the checkout and a run folder once; a lane's own path is resolved when asked
    for, so a symlink out made after the batch began is still refused."""
    repo, victim = _checkout(tmp_path)
    (repo / LANE_DIR).mkdir(parents=True)
    paths = LaunchPaths(repo)
    assert paths.lane_path(LANE_DIR, f"{LANE_DIR}/a.log") == (repo / LANE_DIR / "a.log").resolve()
    assert paths.task_folder("benchmarks/tasks/s/t") == (repo / "benchmarks/tasks/s/t").resolve()
    (repo / LANE_DIR / "b.log").symlink_to(victim / "precious.txt")
    (repo / "benchmarks/tasks/s/u").symlink_to(victim)
    for refused in (
        lambda: paths.lane_path(LANE_DIR, f"{LANE_DIR}/b.log"),
        lambda: paths.lane_path(LANE_DIR, f"{LANE_DIR}/../../../../../victim/x.log"),
        lambda: paths.lane_path("runs/staging/r/../../..", "runs/x.log"),
        lambda: paths.task_folder("benchmarks/tasks/s/u"),
        lambda: paths.task_folder("../victim"),
    ):
        with pytest.raises(InfraError, match="refused"):
            refused()


def test_a_batch_resolves_each_lane_path_as_the_one_off_checks_do(tmp_path: Path) -> None:
    """A batch walks only the part of a lane's path below its shared folder; the answer must be the one
    `inside` and `lane_path` give by resolving the whole path, for links in or out, missing names, `..`
    and a checkout that is itself reached by a link."""
    real, victim = _checkout(tmp_path)
    (real / LANE_DIR).mkdir(parents=True)
    (real / LANE_DIR / "inner").symlink_to(real / LANE_DIR / "elsewhere", target_is_directory=True)
    (real / LANE_DIR / "out").symlink_to(victim)
    (real / "benchmarks/tasks/s/alias").symlink_to(real / "benchmarks/tasks/s/t")
    (real / "benchmarks/tasks/s/away").symlink_to(victim)
    repo = tmp_path / "linked"
    repo.symlink_to(real)
    lane_paths = [
        "a.log",
        "inner/a.log",
        "out/x.log",
        "missing/deeper/a.log",
        "./a.log",
        "inner/../a.log",
        "",
    ]
    tasks = [
        "benchmarks/tasks/s/t",
        "benchmarks/tasks/s/alias",
        "benchmarks/tasks/s/away",
        "benchmarks/none/x",
    ]
    tasks += ["benchmarks/../benchmarks/tasks/s/t", "."]
    batch = LaunchPaths(repo)  # one batch for every lane, as the dispatcher uses it
    for name in [*(f"{LANE_DIR}/{name}" for name in lane_paths), str(victim)]:
        _same(partial(batch.lane_path, LANE_DIR, name), partial(lane_path, repo, LANE_DIR, name))
    for task in tasks:
        _same(partial(batch.task_folder, task), partial(inside, repo, repo / task))


def _same(batched: Callable[[], Path], one_off: Callable[[], Path]) -> None:
    """Both calls answer the same path, or both refuse with the same words."""
    answers: list[Path | str] = []
    for call in (batched, one_off):
        try:
            answers.append(call())
        except InfraError as exc:
            answers.append(str(exc))
    assert answers[0] == answers[1]


async def test_a_suite_file_with_a_hostile_entry_is_refused_with_the_entry_named(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        suite = {
            "suites": {"csb_sdlc_fix": 2},
            "tasks": [
                {"task_id": "slugify-punctuation-fix-001", "suite": "csb_sdlc_fix"},
                {"task_id": "../../../../victim", "suite": "csb_sdlc_fix", "task_dir": "csb_sdlc_fix/x"},
            ],
        }
        (h.repo / "benchmarks/suites/hostile.json").write_text(json.dumps(suite))
        await h.driver.slash_command(REQUESTER, "run --suite-file benchmarks/suites/hostile.json")
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "benchmarks/suites/hostile.json" in reply and "task #2" in reply
        assert "../../../../victim" in reply and "`..`" in reply
        assert h.standin.messages(CHANNEL) == []
        assert await request_count(h.bot.store) == 0


async def test_a_task_folder_symlinked_out_of_the_checkout_blocks_on_the_card(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        outside = tmp_path / "elsewhere"
        outside.mkdir()
        folder = h.repo / "benchmarks/tasks/csb_sdlc_fix/slugify-punctuation-fix-001"
        shutil.move(folder, outside / folder.name)
        folder.symlink_to(outside / folder.name)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.deliver()
        text = card_text(h.last_card())
        assert "task folders lead outside the CSB checkout" in text
        assert "benchmarks/tasks/csb_sdlc_fix/slugify-punctuation-fix-001" in text
        assert "Approve" not in labels(h.last_card())
