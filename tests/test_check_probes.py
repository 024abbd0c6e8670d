"""`csb-bot check`: each probe catches the failure it is there for, on one ✗ line, and the rest still run.

Real dependencies throughout: a PostgreSQL server stopped under the check, the Slack stand-in refusing the
token or granting too few scopes, a checkout with a task folder gone, a `task.toml` real Harbor cannot
load, a Docker socket that accepts and never answers, a Ray head without the lane resource.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_slack import slack_api_url
from harness import copy_bench
from postgres_cluster import Cluster, server_bin
from ray_cluster import RayHead
from real_harbor import harbor_or_skip
from test_cli import SECRETS, bot_env, free_port, run

from bot.slack.scopes import BOT_SCOPES
from bot.store import schema

pytestmark = pytest.mark.slow  # real child processes

FIRST_TASK = "benchmarks/tasks/csb_sdlc_fix/slugify-punctuation-fix-001"  # the suite file's first


def failures(result: subprocess.CompletedProcess[str]) -> list[str]:
    """Exit 1, no secret shown, and the ✗ lines without their mark."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
    assert "Traceback" not in result.stdout + result.stderr
    return [line[2:] for line in result.stdout.splitlines() if line.startswith("✗ ")]


def test_json_lists_every_probe_and_the_verdict(tmp_path: Path) -> None:
    result = run(["check", "--json"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    names = [probe["name"] for probe in document["probes"]]
    expected = "settings database slack checkout harbor credentials docker disk accounts executor orphans"
    assert names == expected.split()
    assert {line["mark"] for probe in document["probes"] for line in probe["lines"]} <= {"ok", "note", "fail"}


def test_settings_problems_do_not_stop_the_other_probes(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_SIGNING_SECRET="", CSB_REPO=str(tmp_path / "nowhere"))
    result = run(["check", "--json"], env, cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is False
    failed = {probe["name"]: [line["text"] for line in probe["lines"]] for probe in document["probes"]}
    assert failed["settings"] == ["missing environment variable: SLACK_SIGNING_SECRET"]
    assert failed["checkout"] == [f"CSB_REPO {tmp_path / 'nowhere'} is not a directory"]
    assert failed["slack"][0].startswith("Slack: team CSB Playground")  # the bot token was still tried


@pytest.fixture
def stopped_postgres() -> Iterator[str]:
    """The URL of a migrated database whose server has been stopped."""
    bin_dir = server_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
        url = cluster.new_database()
    finally:
        cluster.stop()
    yield url


def test_a_stopped_postgresql_is_a_problem(tmp_path: Path, stopped_postgres: str) -> None:
    (problem,) = failures(run(["check"], bot_env(tmp_path, CSB_DATABASE_URL=stopped_postgres), cwd=tmp_path))
    assert (
        problem.startswith("database: postgresql+asyncpg://")
        and "could not read the schema revision" in problem
    )


def test_a_reachable_postgresql_names_its_schema_revision(tmp_path: Path, postgres: Cluster | None) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    env = bot_env(tmp_path, CSB_DATABASE_URL=postgres.new_database())
    result = run(["check"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert f"schema revision {schema.head()}, up to date" in result.stdout
    old = run(["check"], bot_env(tmp_path, CSB_DATABASE_URL=postgres.new_database(migrated=False)), tmp_path)
    assert f"· database postgresql+asyncpg://{postgres.user}@127.0.0.1:{postgres.port}/" in old.stdout
    assert "no schema yet (this csb-bot creates revision" in old.stdout


def test_slack_refusing_the_token_is_a_problem(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_BOT_TOKEN="xoxb-revoked-hunter2")
    assert failures(run(["check"], env, cwd=tmp_path)) == [
        "Slack refuses SLACK_BOT_TOKEN: auth.test answered invalid_auth"
    ]


def test_a_scope_the_token_lacks_is_named(tmp_path: Path) -> None:
    granted = [scope for scope in BOT_SCOPES if scope not in ("files:write", "usergroups:read")]
    env = bot_env(tmp_path, SLACK_API_URL=slack_api_url(granted))
    assert failures(run(["check"], env, cwd=tmp_path)) == [
        "the bot token lacks scope(s) manifest.yml asks for: usergroups:read, files:write "
        "(add them under OAuth & Permissions and reinstall the app)"
    ]


def test_a_web_api_that_cannot_be_reached_is_a_problem(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/api/"
    (problem,) = failures(run(["check"], bot_env(tmp_path, SLACK_API_URL=url), cwd=tmp_path))
    assert problem.startswith(f"Slack's Web API at {url} cannot be reached: "), problem


def test_socket_mode_refused_is_a_problem(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_APP_TOKEN="xapp-another-app-hunter2")
    assert failures(run(["check"], env, cwd=tmp_path)) == [
        "Slack refuses SLACK_APP_TOKEN for Socket Mode: apps.connections.open answered invalid_auth"
    ]


def test_a_missing_task_folder_is_a_problem(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path)
    shutil.rmtree(repo / FIRST_TASK)
    assert failures(run(["check"], bot_env(tmp_path, CSB_REPO=str(repo)), cwd=tmp_path)) == [
        f"1 task folder of benchmarks/suites/csb-example.json missing: {FIRST_TASK}"
    ]


def test_missing_credentials_of_the_default_mcp_lane_are_a_problem(tmp_path: Path) -> None:
    env = bot_env(tmp_path)
    del env["SOURCEGRAPH_ACCESS_TOKEN"]
    assert failures(run(["check"], env, cwd=tmp_path)) == [
        "SOURCEGRAPH_ACCESS_TOKEN is not set; the default mcp-remote-direct lane needs it "
        "(its cards would be blocked)"
    ]


def test_real_harbor_refuses_a_task_toml_without_a_task_name(tmp_path: Path) -> None:
    harbor = harbor_or_skip()
    repo = copy_bench(tmp_path)
    toml = repo / FIRST_TASK / "task.toml"
    toml.write_text("".join(line for line in toml.read_text().splitlines(True) if "csb-example/" not in line))
    env = bot_env(tmp_path, CSB_REPO=str(repo), CSB_HARBOR=str(harbor), LITELLM_LOCAL_MODEL_COST_MAP="True")
    (problem,) = failures(run(["check"], env, cwd=tmp_path))
    assert problem.startswith(f"harbor cannot load {FIRST_TASK}/task.toml: task.name"), problem


def test_a_missing_csb_repo_does_not_make_real_harbor_a_stranger(tmp_path: Path) -> None:
    harbor = harbor_or_skip()
    env = bot_env(tmp_path, CSB_REPO=str(tmp_path / "nowhere"), CSB_HARBOR=str(harbor))
    result = run(["check"], env, cwd=tmp_path)
    assert failures(result) == [f"CSB_REPO {tmp_path / 'nowhere'} is not a directory"]
    assert f"✓ harbor 0.25.0: {harbor}" in result.stdout.splitlines()
    assert "not Harbor itself" not in result.stdout


@pytest.fixture
def silent_docker(tmp_path: Path) -> Iterator[str]:
    """A Unix socket that accepts connections and never answers: a daemon that hangs."""
    path = tmp_path / "docker.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen(8)
        yield f"unix://{path}"


def test_a_docker_daemon_that_does_not_answer_is_a_problem(tmp_path: Path, silent_docker: str) -> None:
    """Within `[engine] docker_ping_sec`, shortened here: CSB's 10 s would be a wait, not a proof."""
    config = tmp_path / "csb-bot.toml"
    config.write_text("[engine]\ndocker_ping_sec = 0.5\n")
    env = bot_env(tmp_path, DOCKER_HOST=silent_docker, CSB_CONFIG=str(config))
    del env["HARBOR_ENV"]  # Harbor's default environment: local Docker
    assert failures(run(["check"], env, cwd=tmp_path)) == [
        f"Docker daemon is not running: {silent_docker} did not answer in 0.5 s"
    ]


def test_no_docker_socket_at_all_is_a_problem(tmp_path: Path) -> None:
    env = bot_env(tmp_path, DOCKER_HOST=f"unix://{tmp_path / 'absent.sock'}")
    del env["HARBOR_ENV"]
    (problem,) = failures(run(["check"], env, cwd=tmp_path))
    assert problem.startswith(f"Docker daemon is not running: cannot reach unix://{tmp_path / 'absent.sock'}")


def test_account_homes_without_a_live_token_are_a_problem(tmp_path: Path) -> None:
    for name, expires_ms in (("account1", 1_000), ("account2", 2_000)):
        credentials = tmp_path / ".claude-homes" / name / ".claude" / ".credentials.json"
        credentials.parent.mkdir(parents=True)
        credentials.write_text(json.dumps({"claudeAiOauth": {"expiresAt": expires_ms}}))
    assert failures(run(["check"], bot_env(tmp_path), cwd=tmp_path)) == [
        "none of 2 account homes has a live token: account1, account2"
    ]


def test_a_ray_head_without_the_lane_resource_is_a_problem(tmp_path: Path, ray_head: RayHead) -> None:
    env = bot_env(tmp_path, CSB_EXECUTOR="ray", CSB_RAY_ADDRESS=ray_head.dashboard_url)
    offered = run(["check"], {**env, "CSB_RAY_LANE_RESOURCE": "csb_slot"}, cwd=tmp_path)
    assert offered.returncode == 0, offered.stdout
    assert "✓ Ray nodes offering the lane resource csb_slot: 1 (8 slots)" in offered.stdout.splitlines()
    missing = run(["check"], {**env, "CSB_RAY_LANE_RESOURCE": "gpu_slot"}, cwd=tmp_path)
    (problem,) = failures(missing)
    expected = "no live Ray node offers the lane resource gpu_slot (CSB_RAY_LANE_RESOURCE"
    assert problem.startswith(expected), problem
    assert f"✓ Ray head {ray_head.dashboard_url} answers: Ray 2.60.0" in missing.stdout.splitlines()


def test_check_help_says_what_it_probes_and_what_it_reads(tmp_path: Path) -> None:
    result = run(["check", "--help"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0
    assert "Exit 1 on any ✗" in result.stdout and "--json" in result.stdout
    for variable in (
        "SLACK_BOT_TOKEN",
        "CSB_DATABASE_URL",
        "HARBOR_ENV",
        "DOCKER_HOST",
        "CSB_RAY_LANE_RESOURCE",
    ):
        assert variable in result.stdout
