"""The lane command, its environment and its folder names, exactly as CSB's harness builds them."""

from __future__ import annotations

import shlex
from datetime import datetime
from pathlib import Path

import pytest

from bot.csb import (
    LaneVars,
    batch_env,
    job_name,
    jobs_dir,
    lane_command,
    lane_env,
    model_short,
    run_dir_name,
    shell_line,
)
from bot.csb.child_env import child_environ
from bot.csb.harbor_run import HarborEnv, LaunchConfig, daytona_labels, lane_argv, run_stamp
from bot.csb.lane_env import EnvLocal, instruction_variant, sourcegraph_repos
from bot.domain.mrkdwn import escape
from bot.domain.spec import Category, LanePlan, LaneRole, Mode, RunParams, RunSpec, TaskRef
from bot.services.checks import RequestChecks
from bot.slack.views.replies import plan_text

HAIKU = "anthropic/claude-haiku-4-5-20251001"


@pytest.mark.parametrize(
    ("model", "short"),
    [
        (HAIKU, "haiku"),
        ("anthropic/claude-sonnet-4-6", "sonnet"),
        ("anthropic/claude-opus-4-6", "opus"),
        ("Claude-Opus-4", "opus"),
        ("openai/gpt-4o-mini", "gpt4omin"),  # CSB: `-`/`_` deleted, cut to 8
        ("vendor/My_Model-2.5", "mymodel2"),
        ("gemini-2.5-pro", "gemini2."),  # dots are kept
        ("", "model"),
    ],
)
def test_model_short(model: str, short: str) -> None:
    assert model_short(model) == short


def test_run_dir_name() -> None:
    started = run_stamp(datetime(2026, 2, 23, 17, 12, 32))
    assert started == "20260223_171232"
    assert (
        run_dir_name("csb_sdlc_fix", HAIKU, started, "a1b2c3") == "csb_sdlc_fix_haiku_20260223_171232_a1b2c3"
    )
    assert run_dir_name("csb_org_onboarding", "openai/gpt-4o", started, "9") == (
        "csb_org_onboarding_gpt4o_20260223_171232_9"
    )


def test_job_names_are_unique_per_attempt_and_walked_by_csbs_status_tool() -> None:
    names = {job_name(run, lane, attempt) for run in (1, 2) for lane in (1, 12) for attempt in (1, 2)}
    assert len(names) == 8
    assert all(name.startswith("csb_") and "__" not in name for name in names)


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


def test_lane_command_with_job_name_env_and_overrides() -> None:
    env = HarborEnv(name="docker", memory_mb="8192", storage_mb="20480")
    argv = lane_command("/opt/harbor", "p", "m", "j", job="csb_r1_l2_a1", env=env, timeout_multiplier=3)
    assert argv[0] == "/opt/harbor"
    assert argv[-10:] == [
        "--timeout-multiplier", "3",
        "--job-name", "csb_r1_l2_a1",
        "--env", "docker",
        "--override-memory-mb", "8192",
        "--override-storage-mb", "20480",
    ]  # fmt: skip


def test_daytona_lanes_run_csbs_guarded_environment_with_its_labels() -> None:
    """As harbor_run_guarded: import path and `--ek` labels first, in its order, empty ones left out."""
    lane = {
        "DAYTONA_LABEL_RUN_ID": "csb_sdlc_fix_haiku_20261201_132703_4",
        "DAYTONA_LABEL_BENCHMARK": "csb_sdlc_fix",
        "DAYTONA_LABEL_TASK_ID": "t-001",
        "DAYTONA_LABEL_CONFIG": "mcp-remote-direct",
        "DAYTONA_LABEL_CATEGORY": "",
        "BASELINE_MCP_TYPE": "sourcegraph_full",
        "TASK_SOURCE_DIR": "/csb/benchmarks/tasks/csb_sdlc_fix/t-001",
    }
    labels = daytona_labels(lane, HAIKU, "csb_r4_l2_a1")
    argv = lane_command(
        "harbor", "p", HAIKU, "j", job="csb_r4_l2_a1", env=HarborEnv(name="daytona"), labels=labels
    )
    assert argv[:4] == [
        "harbor",
        "run",
        "--environment-import-path",
        "ccb_harbor.daytona:GuardedDaytonaEnvironment",
    ]
    keys = [argv[i + 1].split("=", 1)[0] for i, token in enumerate(argv) if token == "--ek"]
    assert keys == [
        "label_launcher", "label_run_id", "label_benchmark", "label_task_id", "label_config",
        "label_job_name", "label_model", "label_mcp_type", "task_source_dir",
    ]  # fmt: skip
    assert "label_mcp_type=sourcegraph_full" in argv and argv[-2:] == ["--env", "daytona"]
    assert "--ek" not in lane_command("harbor", "p", HAIKU, "j", env=HarborEnv(), labels=labels)


def test_lane_argv_is_the_lane_command_of_this_deployment() -> None:
    """Harbor, its environment and multiplier from the config; on Daytona the labels from the lane env."""
    lane = {"DAYTONA_LABEL_TASK_ID": "t-001", "BASELINE_MCP_TYPE": "none"}
    base = {"DAYTONA_OVERRIDE_MEMORY": "8192"}
    daytona = LaunchConfig(
        repo=Path("/csb"),
        harbor="/opt/harbor",
        base_env=child_environ(base),
        timeout_multiplier=3,
        daytona=True,
    )
    argv = lane_argv(daytona, "p", HAIKU, "j", "csb_r1_l2_a1", lane)
    labels = daytona_labels(lane, HAIKU, "csb_r1_l2_a1")
    env = HarborEnv(name="daytona", memory_mb="8192")
    assert argv == lane_command(
        "/opt/harbor", "p", HAIKU, "j", job="csb_r1_l2_a1", env=env, timeout_multiplier=3, labels=labels
    )
    assert "label_task_id=t-001" in argv and "label_job_name=csb_r1_l2_a1" in argv
    local = LaunchConfig(
        repo=Path("/csb"), harbor="harbor", base_env=child_environ({}), timeout_multiplier=10, daytona=False
    )
    assert lane_argv(local, "p", HAIKU, "j", "csb_r1_l2_a1", lane) == lane_command(
        "harbor", "p", HAIKU, "j", job="csb_r1_l2_a1"
    )


def test_a_dry_run_prints_the_command_the_engine_would_run() -> None:
    """The same argv function, with placeholders for what approval decides: on Daytona, labels and all."""
    task = TaskRef(suite="csb_sdlc_fix", task_id="t-001", path="benchmarks/tasks/csb_sdlc_fix/t-001")
    spec = RunSpec(
        params=RunParams(suite="csb_sdlc_fix", model=HAIKU, mode=Mode.BASELINE_ONLY),
        task_file="benchmarks/suites/csb-example.json",
        task_file_sha256="0" * 64,
        tasks=(task,),
        lanes=(LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none"),),
        parallel=1,
    )
    launch = LaunchConfig(
        repo=Path("/csb"), harbor="harbor", base_env=child_environ({}), timeout_multiplier=10, daytona=True
    )
    checks = RequestChecks()
    text = "\n".join(plan_text(spec, checks, launch))
    run_dir = "csb_sdlc_fix_haiku_<time>_<run>"
    lane = {
        "DAYTONA_LABEL_RUN_ID": run_dir,
        "DAYTONA_LABEL_BENCHMARK": "csb_sdlc_fix",
        "DAYTONA_LABEL_TASK_ID": "t-001",
        "DAYTONA_LABEL_CONFIG": "baseline-local-direct",
        "DAYTONA_LABEL_CATEGORY": "staging",
        "BASELINE_MCP_TYPE": "none",
        "TASK_SOURCE_DIR": f"/csb/{task.path}",  # absolute under the checkout, as the engine sets it
    }
    job = "csb_r<run>_l<lane>_a<attempt>"
    argv = lane_argv(launch, task.path, HAIKU, f"runs/staging/{run_dir}/baseline-local-direct", job, lane)
    shown = {"BASELINE_MCP_TYPE": "none", "INSTRUCTION_VARIANT": "default"}
    assert escape(shell_line(argv, shown)) in text
    assert (
        "--ek label_task_id=t-001" in text and escape(shlex.join(["--ek", f"label_job_name={job}"])) in text
    )


def test_batch_env_is_the_harness_environment() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "PYTHONPATH": "/opt/lib",
        "SLACK_BOT_TOKEN": "xoxb-secret",
        "SLACK_SIGNING_SECRET": "s",
        "ANTHROPIC_API_KEY": "placeholder-key",
        "SOURCEGRAPH_ACCESS_TOKEN": "sgp",
    }
    env = batch_env(
        child_environ(base), Path("/csb"), {"SOURCEGRAPH_URL": "https://sg.example", "SLACK_X": "leak"}
    )
    assert env["PYTHONPATH"] == "/csb:/opt/lib"
    assert (
        batch_env(child_environ({}), Path("/csb"), {})["PYTHONPATH"] == "/csb:"
    )  # as `$(pwd):${PYTHONPATH:-}`
    assert (env["USE_SUBSCRIPTION"], env["DOCKER_BUILDKIT"], env["REPO_ROOT"], env["DEBUG_MODE"]) == (
        "true",
        "1",
        "/csb",
        "",
    )
    assert env["SOURCEGRAPH_URL"] == "https://sg.example" and env["SOURCEGRAPH_ACCESS_TOKEN"] == "sgp"
    assert "ANTHROPIC_API_KEY" not in env
    assert not [key for key in env if key.startswith("SLACK_")]
    assert (
        batch_env(child_environ({"ANTHROPIC_API_KEY": "sk-real"}), Path("/csb"), {})["ANTHROPIC_API_KEY"]
        == "sk-real"
    )
    assert base["SLACK_BOT_TOKEN"] == "xoxb-secret"  # the caller's mapping is untouched


def test_lane_env_adds_the_lanes_own_variables() -> None:
    lane = LaneVars(
        home="/homes/account2",
        mcp_type="sourcegraph_full",
        config="mcp-remote-direct",
        task_source_dir="/csb/benchmarks/tasks/s/t",
        instruction_variant="mcp",
        run_id="s_haiku_20261201_132703_4",
        suite="s",
        task_id="t",
        category="staging",
        sourcegraph_repos="sg-evals/a\nsg-evals/b",
    )
    env = lane_env(child_environ({"PATH": "/usr/bin", "SLACK_APP_TOKEN": "xapp"}), lane)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/homes/account2",
        "BASELINE_MCP_TYPE": "sourcegraph_full",
        "TASK_SOURCE_DIR": "/csb/benchmarks/tasks/s/t",
        "INSTRUCTION_VARIANT": "mcp",
        "DAYTONA_LABEL_RUN_ID": "s_haiku_20261201_132703_4",
        "DAYTONA_LABEL_BENCHMARK": "s",
        "DAYTONA_LABEL_TASK_ID": "t",
        "DAYTONA_LABEL_CONFIG": "mcp-remote-direct",
        "DAYTONA_LABEL_CATEGORY": "staging",
        "SOURCEGRAPH_REPOS": "sg-evals/a\nsg-evals/b",
    }


def test_instruction_variant_and_sourcegraph_repos(tmp_path: Path) -> None:
    assert instruction_variant("mcp-remote-direct", mcp_lane=False) == "default"
    assert instruction_variant("mcp-remote-artifact", mcp_lane=True) == "mcp"
    assert instruction_variant("mcp-scip-remote-direct", mcp_lane=True) == "mcp_scip"
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        'FROM x\nENV SOURCEGRAPH_REPOS="sg-evals/a,sg-evals/b"\nENV SOURCEGRAPH_REPOS="c"\n'
    )
    assert sourcegraph_repos(dockerfile) == "sg-evals/a,sg-evals/b\nc"
    dockerfile.write_text("FROM x\nENV SOURCEGRAPH_REPOS=unquoted\n")
    assert sourcegraph_repos(dockerfile) == ""
    assert sourcegraph_repos(tmp_path / "missing") == ""


def test_env_local_gives_only_what_it_exports(tmp_path: Path) -> None:
    """`source .env.local` does not export plain assignments: only exported variables reach Harbor."""
    env_local = EnvLocal(tmp_path)
    assert env_local.exports(child_environ({"PATH": "/usr/bin:/bin"})) == {}
    (tmp_path / ".env.local").write_text(
        "SOURCEGRAPH_ACCESS_TOKEN=not-exported\n"
        'export SOURCEGRAPH_URL="https://sg.example"\n'
        "DAYTONA_API_KEY='dk'\nexport DAYTONA_API_KEY\n"
        "export SLACK_BOT_TOKEN=never\n"
    )
    exports = env_local.exports(child_environ({"PATH": "/usr/bin:/bin", "KEPT": "1"}))
    assert exports == {
        "SOURCEGRAPH_URL": "https://sg.example",
        "DAYTONA_API_KEY": "dk",
        "SLACK_BOT_TOKEN": "never",
    }
    assert "SLACK_BOT_TOKEN" not in batch_env(child_environ({}), tmp_path, exports)


def test_shell_line_quotes_and_prefixes_the_mcp_type() -> None:
    argv = lane_command("harbor", "benchmarks/tasks/a b", HAIKU, "runs/staging/r/mcp-remote-direct")
    line = shell_line(argv, {"BASELINE_MCP_TYPE": "sourcegraph_full"})
    assert line.startswith("BASELINE_MCP_TYPE=sourcegraph_full harbor run --path 'benchmarks/tasks/a b' ")
    assert line.endswith("-n 1 --timeout-multiplier 10")
    assert lane_command("harbor", "p", HAIKU, "j")[-2:] == ["--timeout-multiplier", "10"]
    assert shell_line(["harbor", "run"], {}) == "harbor run"
