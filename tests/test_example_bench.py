"""The example bench (configs/example-bench): its CSB-shaped files, its tasks and its Harbor stand-in.

The bot's own tests and demos rely on this checkout behaving as its README says, so these tests
pin that contract: the stand-in is run as a real child process from the checkout root (as the bot
runs Harbor), every verifier is run on unsolved and solved copies, and the repository itself is
never written to.
"""

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "configs" / "example-bench"
HARBOR = BENCH / "bin" / "harbor"
TASKS_ROOT = BENCH / "benchmarks" / "tasks"
SUITE_FILE = BENCH / "benchmarks" / "suites" / "csb-example.json"
SELECTION_FILE = BENCH / "configs" / "selected_benchmark_tasks.json"
EVAL_MATRIX = BENCH / "configs" / "eval_matrix.json"

MODEL = "anthropic/claude-haiku-4-5-20251001"
AGENT = "agents.claude_baseline_agent:BaselineClaudeCodeAgent"
MCP_TYPE = {"baseline": "none", "mcp": "sourcegraph_full"}
RUN_TIMEOUT = 30  # seconds; one stand-in run takes well under one

# The README's table: reward per lane with no scripted behaviour (baseline, mcp).
EXPECTED_REWARDS = {
    "slugify-punctuation-fix-001": (1.0, 1.0),
    "pagination-offset-fix-001": (0.0, 1.0),
    "config-merge-nested-fix-001": (0.0, 0.5),
    "retry-backoff-debug-001": (1.0, 1.0),
    "csv-quoting-debug-001": (0.0, 1.0),
    "lru-cache-eviction-debug-001": (0.0, 1.0),
    "service-owner-onboarding-001": (0.0, 1.0),
}
EASY_TASK = "csb_sdlc_fix/slugify-punctuation-fix-001"
HARD_TASK = "csb_sdlc_debug/lru-cache-eviction-debug-001"
PARTIAL_TASK = "csb_sdlc_fix/config-merge-nested-fix-001"

# The reference solution of the partial task fixes one of two bugs; this is the complete fix, to
# show that its verifier can award 1.0.
COMPLETE_FIXES = {
    "config-merge-nested-fix-001": {
        "settings/merge.py": '''"""Merge one settings layer over another."""

import copy
from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return a new dict: ``base`` with ``override`` applied on top, nested tables key by key."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
'''
    }
}

# Top-level keys of a real Harbor trial result.json (fixture result_trial_pass.json).
TRIAL_RESULT_KEYS = {
    "id",
    "task_name",
    "trial_name",
    "trial_uri",
    "task_id",
    "source",
    "task_checksum",
    "config",
    "agent_info",
    "agent_result",
    "verifier_result",
    "exception_info",
    "started_at",
    "finished_at",
    "environment_setup",
    "agent_setup",
    "agent_execution",
    "verifier",
}


# --- helpers ------------------------------------------------------------------------------------


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())


def suite_tasks() -> list[dict[str, Any]]:
    return load_json(SUITE_FILE)["tasks"]


def task_ids() -> list[str]:
    return [task["task_dir"] for task in suite_tasks()]


def bench_digest() -> str:
    """Hash of every file under the bench, to prove the tests leave it untouched. runs/ is excluded, and so
    are bytecode caches: a test elsewhere in the suite (real Harbor importing the bench's harness) may
    write them at any moment, and they are no content of the bench."""
    digest = hashlib.sha256()
    for file in sorted(
        p
        for p in BENCH.rglob("*")
        if p.is_file() and not {"runs", "__pycache__"} & set(p.relative_to(BENCH).parts)
    ):
        digest.update(str(file.relative_to(BENCH)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def lane_env(lane: str, **extra: str) -> dict[str, str]:
    """The child's environment: the lane's BASELINE_MCP_TYPE, and this interpreter first on PATH so
    the stand-in's `#!/usr/bin/env python3` finds a Python with tomllib."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARBOR_STANDIN_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["BASELINE_MCP_TYPE"] = MCP_TYPE[lane]
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = f"{BENCH}:"  # as CSB's harness: Harbor imports the agent from the checkout
    env["USE_SUBSCRIPTION"] = "true"
    return {**env, **extra}


def harbor_argv(task_path: str, jobs_dir: Path, *extra: str, multiplier: str = "10") -> list[str]:
    """The per-lane command line the bot builds (README of the CSB facts)."""
    return [
        str(HARBOR),
        "run",
        "--path",
        task_path,
        "--agent-import-path",
        AGENT,
        "--model",
        MODEL,
        "--jobs-dir",
        str(jobs_dir),
        "-n",
        "1",
        "--timeout-multiplier",
        multiplier,
        *extra,
    ]


def run_harbor(
    task_dir: str, lane: str, jobs_dir: Path, *extra: str, multiplier: str = "10", **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        harbor_argv(f"benchmarks/tasks/{task_dir}", jobs_dir, *extra, multiplier=multiplier),
        cwd=BENCH,
        env=lane_env(lane, **env),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def trial_results(jobs_dir: Path) -> list[Path]:
    return sorted(jobs_dir.glob("*/*/result.json"))


def job_results(jobs_dir: Path) -> list[Path]:
    return sorted(jobs_dir.glob("*/result.json"))


def single_trial(jobs_dir: Path) -> dict[str, Any]:
    results = trial_results(jobs_dir)
    assert len(results) == 1, results
    return load_json(results[0])


def write_script(tmp_path: Path, script: dict[str, str]) -> str:
    path = tmp_path / "standin-script.json"
    path.write_text(json.dumps(script))
    return str(path)


def run_script(script: Path, code: Path) -> None:
    subprocess.run(["bash", str(script)], cwd=code, check=True, capture_output=True, timeout=RUN_TIMEOUT)


def verify(task_copy: Path, tmp_path: Path) -> float:
    """Run a task copy's tests/test.sh the way the stand-in does and return its reward."""
    reward_file = tmp_path / "reward.txt"
    reward_file.unlink(missing_ok=True)
    subprocess.run(
        ["bash", str(task_copy / "tests" / "test.sh")],
        cwd=task_copy / "environment" / "repo",
        env={**os.environ, "REWARD_FILE": str(reward_file)},
        check=True,
        capture_output=True,
        timeout=RUN_TIMEOUT,
    )
    return float(reward_file.read_text())


def copy_task(task_dir: str, tmp_path: Path) -> Path:
    copy = tmp_path / Path(task_dir).name
    shutil.copytree(TASKS_ROOT / task_dir, copy)
    return copy


@pytest.fixture(scope="module", autouse=True)
def bench_untouched() -> Iterator[None]:
    """Nothing here may write into the repository (scratch copies and jobs dirs live in tmp)."""
    before = bench_digest()
    yield
    assert bench_digest() == before


# --- the checkout's files -----------------------------------------------------------------------


def test_suite_counts_match_tasks() -> None:
    suite = load_json(SUITE_FILE)
    counts: dict[str, int] = {}
    for task in suite["tasks"]:
        counts[task["suite"]] = counts.get(task["suite"], 0) + 1
    assert suite["suites"] == counts
    assert suite["task_count"] == len(suite["tasks"])
    assert {"csb_sdlc_fix", "csb_sdlc_debug"} <= set(counts)


def test_expected_table_covers_every_task() -> None:
    assert sorted(task["task_id"] for task in suite_tasks()) == sorted(EXPECTED_REWARDS)


@pytest.mark.parametrize("task", suite_tasks(), ids=lambda task: task["task_id"])
def test_task_folder_matches_suite_entry(task: dict[str, Any]) -> None:
    folder = TASKS_ROOT / task["task_dir"]
    assert task["task_dir"] == f"{task['suite']}/{task['task_id']}"
    meta = tomllib.loads((folder / "task.toml").read_text())
    assert meta["task"]["id"] == folder.name == task["task_id"]
    assert meta["task"]["difficulty"] == task["difficulty"]
    assert meta["task"]["language"] == task["language"]
    assert 60 <= meta["task"]["time_limit_sec"] <= 120
    assert meta["verification"]["command"] == "bash /tests/test.sh"
    assert {"build_timeout_sec", "cpus", "memory"} <= set(meta["environment"])
    for name in ("instruction.md", "environment/Dockerfile", "environment/Dockerfile.sg_only"):
        assert (folder / name).is_file(), name
    assert os.access(folder / "solution" / "solve.sh", os.X_OK)
    assert os.access(folder / "tests" / "test.sh", os.X_OK)


def test_selection_file_points_at_suite_tasks() -> None:
    selection = load_json(SELECTION_FILE)
    assert selection["metadata"]
    by_id = {task["task_id"]: task for task in suite_tasks()}
    assert len(selection["tasks"]) == 3
    for task in selection["tasks"]:
        assert task["task_dir"] == by_id[task["task_id"]]["task_dir"]
        assert task["benchmark"] == by_id[task["task_id"]]["suite"]
        assert (TASKS_ROOT / task["task_dir"] / "task.toml").is_file()


def test_eval_matrix_has_the_official_configs() -> None:
    matrix = load_json(EVAL_MATRIX)
    definitions = matrix["config_definitions"]
    assert matrix["official_default_configs"] == ["baseline", "sourcegraph_full"]
    assert definitions["baseline"]["baseline_mcp_type"] == "none"
    assert definitions["sourcegraph_full"]["baseline_mcp_type"] == "sourcegraph_full"


# --- the verifiers ------------------------------------------------------------------------------


@pytest.mark.parametrize("task_dir", task_ids())
def test_unsolved_code_scores_zero(task_dir: str, tmp_path: Path) -> None:
    """Zero, not merely below 1: an unsolved task must classify as `failed` (reward > 0 is passed)."""
    assert verify(copy_task(task_dir, tmp_path), tmp_path) == 0.0


@pytest.mark.parametrize("task_dir", task_ids())
def test_reference_solution_scores_as_documented(task_dir: str, tmp_path: Path) -> None:
    task = copy_task(task_dir, tmp_path)
    run_script(task / "solution" / "solve.sh", task / "environment" / "repo")
    assert verify(task, tmp_path) == EXPECTED_REWARDS[task.name][1]


@pytest.mark.parametrize("task_dir", task_ids())
def test_complete_fix_scores_one(task_dir: str, tmp_path: Path) -> None:
    task = copy_task(task_dir, tmp_path)
    code = task / "environment" / "repo"
    run_script(task / "solution" / "solve.sh", code)
    for relative, source in COMPLETE_FIXES.get(task.name, {}).items():
        (code / relative).write_text(source)
    assert verify(task, tmp_path) == 1.0


# --- the stand-in: default rule -----------------------------------------------------------------


@pytest.mark.parametrize("lane", ["baseline", "mcp"])
@pytest.mark.parametrize("task_dir", [EASY_TASK, HARD_TASK, PARTIAL_TASK])
def test_standin_follows_the_rule(task_dir: str, lane: str, tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    proc = run_harbor(task_dir, lane, jobs)
    assert proc.returncode == 0, proc.stderr
    assert "NOT Harbor" in proc.stdout

    [trial_path] = trial_results(jobs)
    [job_path] = job_results(jobs)
    assert trial_path.parent.parent == job_path.parent
    assert re.fullmatch(r"\d{4}-\d\d-\d\d__\d\d-\d\d-\d\d", job_path.parent.name)
    task_id = Path(task_dir).name
    assert re.fullmatch(rf"{re.escape(task_id)}__[A-Za-z0-9]{{7}}", trial_path.parent.name)

    trial = load_json(trial_path)
    assert set(trial) == TRIAL_RESULT_KEYS
    assert trial["task_name"] == task_id
    assert trial["trial_name"] == trial_path.parent.name
    assert trial["exception_info"] is None
    expected = EXPECTED_REWARDS[task_id][0 if lane == "baseline" else 1]
    assert trial["verifier_result"]["rewards"]["reward"] == expected
    assert (trial["config"]["agent"]["import_path"], trial["config"]["agent"]["model_name"]) == (AGENT, MODEL)
    assert trial["config"]["environment"]["type"] == "docker"
    assert trial["config"]["timeout_multiplier"] == 10.0
    assert trial["agent_result"]["cost_usd"] > 0
    assert all(
        trial[name]["finished_at"] >= trial[name]["started_at"] for name in ("agent_execution", "verifier")
    )

    job = load_json(job_path)
    assert "verifier_result" not in job
    assert job["n_total_trials"] == 1
    assert job["stats"]["n_errors"] == 0
    [evals] = job["stats"]["evals"].values()
    assert evals["reward_stats"]["reward"] == {str(expected): [trial["trial_name"]]}


def test_standin_accepts_a_scratch_copy_and_daytona(tmp_path: Path) -> None:
    """The bot's MCP lane runs a copy of the task folder outside the checkout; the id is its name."""
    task = copy_task(HARD_TASK, tmp_path / "copies")
    shutil.copy(task / "environment" / "Dockerfile.sg_only", task / "environment" / "Dockerfile")
    jobs = tmp_path / "jobs"
    proc = subprocess.run(
        harbor_argv(str(task), jobs, "--env", "daytona"),
        cwd=BENCH,
        env=lane_env("mcp"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    trial = single_trial(jobs)
    assert trial["task_name"] == task.name
    assert trial["task_id"]["path"] == str(task)
    assert trial["config"]["environment"]["type"] == "daytona"
    assert trial["verifier_result"]["rewards"]["reward"] == 1.0


def test_standin_cost_is_deterministic(tmp_path: Path) -> None:
    costs = []
    for attempt in ("first", "second"):
        assert run_harbor(EASY_TASK, "baseline", tmp_path / attempt).returncode == 0
        costs.append(single_trial(tmp_path / attempt)["agent_result"])
    assert costs[0] == costs[1]


@pytest.mark.parametrize(
    "argv_extra",
    [["--timeout-multiplier", "0"], ["-n", "0"], ["--env", "kubernetes"]],
)
def test_standin_rejects_bad_arguments(argv_extra: list[str], tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "baseline", jobs, *argv_extra)
    assert proc.returncode == 2
    assert "error" in proc.stderr
    assert not jobs.exists()


def test_standin_rejects_a_folder_without_task_toml(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    proc = run_harbor("csb_sdlc_fix/no-such-task-001", "baseline", jobs)
    assert proc.returncode == 2
    assert "task.toml" in proc.stderr
    assert not jobs.exists()


# --- the stand-in: scripted behaviours ------------------------------------------------------------


def test_script_fail_overrides_the_rule(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"slugify-punctuation-fix-001/baseline": "fail"})
    jobs = tmp_path / "jobs"
    assert run_harbor(EASY_TASK, "baseline", jobs, HARBOR_STANDIN_SCRIPT=script).returncode == 0
    trial = single_trial(jobs)
    assert trial["exception_info"] is None
    assert trial["verifier_result"]["rewards"]["reward"] == 0.0


def test_script_lane_key_wins_over_task_key(tmp_path: Path) -> None:
    script = write_script(
        tmp_path, {"lru-cache-eviction-debug-001": "fail", "lru-cache-eviction-debug-001/baseline": "pass"}
    )
    for lane, reward in (("baseline", 1.0), ("mcp", 0.0)):
        jobs = tmp_path / lane
        assert run_harbor(HARD_TASK, lane, jobs, HARBOR_STANDIN_SCRIPT=script).returncode == 0
        assert single_trial(jobs)["verifier_result"]["rewards"]["reward"] == reward


@pytest.mark.parametrize(
    ("behaviour", "exception_type", "message_part"),
    [
        ("error", "NonZeroAgentExitCodeError", "non-zero exit code"),
        ("ratelimit", "RuntimeError", "429 rate limit"),
    ],
)
def test_script_errors_write_exception_info(
    behaviour: str, exception_type: str, message_part: str, tmp_path: Path
) -> None:
    script = write_script(tmp_path, {"slugify-punctuation-fix-001": behaviour})
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "mcp", jobs, HARBOR_STANDIN_SCRIPT=script)
    assert proc.returncode == 0, proc.stderr
    trial = single_trial(jobs)
    assert trial["exception_info"]["exception_type"] == exception_type
    assert message_part in trial["exception_info"]["exception_message"]
    assert trial["verifier_result"] is None
    [job_path] = job_results(jobs)
    stats = load_json(job_path)["stats"]
    assert stats["n_errors"] == 1
    [evals] = stats["evals"].values()
    assert evals["exception_stats"] == {exception_type: [trial["trial_name"]]}


def test_script_crash_exits_3_without_result(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"slugify-punctuation-fix-001": "crash"})
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "baseline", jobs, HARBOR_STANDIN_SCRIPT=script)
    assert proc.returncode == 3
    assert "crash" in proc.stderr
    assert list(jobs.rglob("result.json")) == []


def test_script_unknown_behaviour_is_a_usage_error(tmp_path: Path) -> None:
    script = write_script(tmp_path, {"slugify-punctuation-fix-001": "explode"})
    proc = run_harbor(EASY_TASK, "baseline", tmp_path / "jobs", HARBOR_STANDIN_SCRIPT=script)
    assert proc.returncode == 2
    assert "explode" in proc.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_script_hang_stops_on_signal(signum: signal.Signals, tmp_path: Path) -> None:
    script = write_script(tmp_path, {"lru-cache-eviction-debug-001": "hang"})
    jobs = tmp_path / "jobs"
    proc = subprocess.Popen(
        harbor_argv(f"benchmarks/tasks/{HARD_TASK}", jobs),
        cwd=BENCH,
        env=lane_env("mcp", HARBOR_STANDIN_SCRIPT=script),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        # Wait for the "hanging" line (its handlers are installed by then); EOF ends the loop too.
        assert any("hanging" in line for line in proc.stdout)
        proc.send_signal(signum)
        assert proc.wait(timeout=RUN_TIMEOUT) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=RUN_TIMEOUT)
        proc.stdout.close()
        proc.stderr.close()
    # As Harbor: the stopped trial still gets its result, with CancelledError, and the job its summary.
    [result] = trial_results(jobs)
    trial = json.loads(result.read_text())
    assert trial["exception_info"]["exception_type"] == "CancelledError"
    assert trial["verifier_result"] is None
    assert (result.parent.parent / "result.json").is_file()


def test_without_the_checkout_on_pythonpath_the_agent_cannot_be_imported(tmp_path: Path) -> None:
    """CSB's harness puts the checkout on PYTHONPATH; without it Harbor cannot import the agent."""
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "baseline", jobs, PYTHONPATH="")
    assert proc.returncode == 1
    assert "No module named 'agents'" in proc.stderr
    assert not jobs.exists()


def test_the_agent_refuses_to_run_without_subscription_mode(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "baseline", jobs, USE_SUBSCRIPTION="")
    assert proc.returncode == 0, proc.stderr
    [result] = trial_results(jobs)
    info = json.loads(result.read_text())["exception_info"]
    assert info["exception_type"] == "AgentSetupError" and "USE_SUBSCRIPTION" in info["exception_message"]


def test_a_job_name_collision_fails_like_harbor(tmp_path: Path) -> None:
    """Harbor refuses a job folder that exists (FileExistsError, exit 1) and writes no result for it."""
    jobs = tmp_path / "jobs"
    first = run_harbor(EASY_TASK, "baseline", jobs, "--job-name", "csb_same")
    second = run_harbor(EASY_TASK, "baseline", jobs, "--job-name", "csb_same")
    assert first.returncode == 0, first.stderr
    assert second.returncode == 1 and "FileExistsError" in second.stderr
    assert len(trial_results(jobs)) == 1
    assert [p.name for p in jobs.iterdir()] == ["csb_same"]


@pytest.mark.parametrize(
    ("variant", "source", "picked"),
    [
        ("default", True, "instruction.md"),
        ("mcp", True, "instruction_mcp.md"),
        ("mcp_scip", True, "instruction_mcp.md"),  # no instruction_mcp_scip.md: the part before `_`
        ("mcp", False, "instruction.md"),  # without TASK_SOURCE_DIR the variant cannot be found
    ],
)
def test_the_agent_records_its_lane_environment(
    variant: str, source: bool, picked: str, tmp_path: Path
) -> None:
    jobs = tmp_path / "jobs"
    task = BENCH / "benchmarks" / "tasks" / EASY_TASK
    env = {"INSTRUCTION_VARIANT": variant, "SOURCEGRAPH_REPOS": "sg-evals/textkit"}
    env["TASK_SOURCE_DIR"] = str(task) if source else ""
    proc = run_harbor(EASY_TASK, "mcp", jobs, **env)
    assert proc.returncode == 0, proc.stderr
    [record] = jobs.glob("*/*/agent/lane-env.json")
    seen = json.loads(record.read_text())
    assert Path(seen["instruction_file"]).name == picked
    assert seen["SOURCEGRAPH_REPOS"] == "sg-evals/textkit" and seen["USE_SUBSCRIPTION"] == "true"
    dockerfile = (task / "environment" / "Dockerfile").read_bytes()
    assert seen["dockerfile_sha256"] == hashlib.sha256(dockerfile).hexdigest()


def test_delay_keeps_the_lane_running(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    started = time.monotonic()
    proc = run_harbor(EASY_TASK, "baseline", jobs, HARBOR_STANDIN_DELAY="0.4")
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started >= 0.4
    assert single_trial(jobs)["verifier_result"]["rewards"]["reward"] == 1.0


def test_delay_past_the_time_limit_is_an_agent_timeout(tmp_path: Path) -> None:
    """time_limit_sec 60 × multiplier 0.005 = 0.3 s of agent time, less than the 30 s delay."""
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "mcp", jobs, multiplier="0.005", HARBOR_STANDIN_DELAY="30")
    assert proc.returncode == 0, proc.stderr
    trial = single_trial(jobs)
    assert trial["exception_info"]["exception_type"] == "AgentTimeoutError"
    assert trial["verifier_result"] is None


def test_script_timeout_is_an_agent_timeout_that_is_still_scored(tmp_path: Path) -> None:
    """As Harbor: the verifier scores what an agent that ran out of time left (CSB counts it)."""
    script = write_script(tmp_path, {"slugify-punctuation-fix-001": "timeout"})
    jobs = tmp_path / "jobs"
    proc = run_harbor(EASY_TASK, "baseline", jobs, HARBOR_STANDIN_SCRIPT=script)
    assert proc.returncode == 0, proc.stderr
    [result] = trial_results(jobs)
    trial = json.loads(result.read_text())
    assert trial["exception_info"]["exception_type"] == "AgentTimeoutError"
    assert trial["verifier_result"] == {"rewards": {"reward": 1.0}}
