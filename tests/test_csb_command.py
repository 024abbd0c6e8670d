"""The lane command, its environment and its folder names, exactly as CSB's harness builds them."""

from __future__ import annotations

from datetime import datetime

import pytest

from bot.csb import jobs_dir, lane_command, lane_env, model_short, run_dir_name, shell_line
from bot.domain.spec import Category

HAIKU = "anthropic/claude-haiku-4-5-20251001"


@pytest.mark.parametrize(
    ("model", "short"),
    [
        (HAIKU, "haiku"),
        ("anthropic/claude-sonnet-4-6", "sonnet"),
        ("anthropic/claude-opus-4-6", "opus"),
        ("Claude-Opus-4", "opus"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("vendor/My_Model v2", "my-model-v2"),
        ("x/../..", "model"),
        ("", "model"),
    ],
)
def test_model_short(model: str, short: str) -> None:
    assert model_short(model) == short


def test_run_dir_name() -> None:
    started = datetime(2026, 2, 23, 17, 12, 32)
    assert (
        run_dir_name("csb_sdlc_fix", HAIKU, started, "a1b2c3") == "csb_sdlc_fix_haiku_20260223_171232_a1b2c3"
    )
    assert run_dir_name("my suite/x", "openai/gpt-4o", started, "z9").startswith("my-suite-x_gpt-4o_")


def test_jobs_dir() -> None:
    assert jobs_dir("staging", "run", "baseline-local-direct") == "runs/staging/run/baseline-local-direct"
    assert jobs_dir(Category.OFFICIAL, "run", "mcp-remote-direct") == "runs/official/run/mcp-remote-direct"


def test_lane_command_is_csbs_argv() -> None:
    argv = lane_command("harbor", "benchmarks/tasks/s/t", HAIKU, "runs/staging/r/baseline-local-direct")
    assert argv == [
        "harbor", "run",
        "--path", "benchmarks/tasks/s/t",
        "--agent-import-path", "agents.claude_baseline_agent:BaselineClaudeCodeAgent",
        "--model", HAIKU,
        "--jobs-dir", "runs/staging/r/baseline-local-direct",
        "-n", "1",
        "--timeout-multiplier", "10",
    ]  # fmt: skip


def test_lane_command_on_daytona_with_another_multiplier() -> None:
    argv = lane_command("/opt/harbor", "p", "m", "j", daytona=True, timeout_multiplier=3)
    assert argv[0] == "/opt/harbor"
    assert argv[-4:] == ["--timeout-multiplier", "3", "--env", "daytona"]


def test_lane_env_drops_slack_secrets_and_sets_home_and_mcp_type() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "SLACK_BOT_TOKEN": "xoxb-secret",
        "SLACK_SIGNING_SECRET": "s",
        "SLACK_APP_TOKEN": "xapp",
        "SOURCEGRAPH_ACCESS_TOKEN": "sgp",
        "NOT_SLACK_X": "kept",
    }
    env = lane_env(base, home="/homes/account2", mcp_type="sourcegraph_full")
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/homes/account2",
        "SOURCEGRAPH_ACCESS_TOKEN": "sgp",
        "NOT_SLACK_X": "kept",
        "BASELINE_MCP_TYPE": "sourcegraph_full",
    }
    assert base["HOME"] == "/root" and "SLACK_BOT_TOKEN" in base  # the caller's mapping is untouched


def test_shell_line_quotes_and_prefixes_the_mcp_type() -> None:
    argv = lane_command("harbor", "benchmarks/tasks/a b", HAIKU, "runs/staging/r/mcp-remote-direct")
    line = shell_line(argv, {"BASELINE_MCP_TYPE": "sourcegraph_full"})
    assert line.startswith("BASELINE_MCP_TYPE=sourcegraph_full harbor run --path 'benchmarks/tasks/a b' ")
    assert line.endswith("-n 1 --timeout-multiplier 10")
    assert shell_line(["harbor", "run"], {}) == "harbor run"
