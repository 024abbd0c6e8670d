"""Preflight on small CSB checkouts, with stand-in CSB scripts run as real child processes."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from csb_tree import CANONICAL, SUITE_FIXTURE, build_tree, fixture_json

from bot.csb import AccountHealth, Catalog, PreflightCheck, PreflightReport, account_health, run_preflight
from bot.csb.child_env import child_environ
from bot.domain.redact import Redactor
from bot.domain.spec import Mode, RunParams, RunSpec

TOKEN = "sgp_secret-token-value"
BOT_ENV = {"SOURCEGRAPH_ACCESS_TOKEN": TOKEN, "SLACK_BOT_TOKEN": "xoxb-never-passed"}
ENV = child_environ(BOT_ENV)  # what the bot hands its scripts: the allow-listed part
HEALTH = "scripts/infra/account_health.py"
REDACT = Redactor.from_env(BOT_ENV)  # what the bot passes: the secrets in its environment (and its own)
TIMEOUT_S = 60.0
GUARD = "scripts/infra/daytona_cost_guard.py"
TASK_COUNT = len(fixture_json(SUITE_FIXTURE)["tasks"])

# A stand-in for a CSB script: does what `<script>.json` beside it says and records how it was called.
_FAKE_SCRIPT = """\
import json, os, pathlib, subprocess, sys, time
me = pathlib.Path(__file__)
plan = json.loads(me.with_suffix(".plan").read_text())
call = {"argv": sys.argv[1:], "cwd": os.getcwd(), "env": sorted(os.environ)}
me.with_suffix(".call").write_text(json.dumps(call))
if plan.get("spawn"):  # a grandchild holding stdout open, as a wrapper script's child would
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
time.sleep(plan.get("sleep", 0))
if "raise" in plan:
    raise RuntimeError(plan["raise"])
sys.stderr.write(plan.get("stderr", ""))
out = plan.get("stdout")
sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
sys.exit(plan.get("exit", 0))
"""


def _script(repo: Path, rel: str, *, stdout: Any = None, exit: int = 0, **plan: Any) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_FAKE_SCRIPT)
    path.with_suffix(".plan").write_text(json.dumps({"stdout": stdout, "exit": exit, **plan}))
    return path


def _call(repo: Path, rel: str) -> dict[str, Any]:
    return json.loads((repo / rel).with_suffix(".call").read_text())


def _health(ok: bool = True, slots: int = 12) -> dict[str, Any]:
    """A report shaped like CSB's `account_health.py preflight --format json`."""
    first = {"label": "account1", "status": "ready", "available_slots": slots, "reasons": []}
    if not ok:
        first.update(status="blocked", available_slots=0, reasons=["expired"])
    second = {"label": "account2", "status": "token_low", "available_slots": 0, "reasons": ["token<90m"]}
    return {
        "accounts": [first, second],
        "recommended_parallel_jobs": slots if ok else 0,
        "summary": f"1 account(s) ready, {slots} total slot(s) available"
        if ok
        else "No usable OAuth accounts found.",
        "ok_to_launch": ok,
    }


def _guard(blockers: list[str] | None = None, warnings: list[str] | None = None) -> dict[str, Any]:
    evaluation = {"blockers": blockers or [], "warnings": warnings or []}
    return {"estimate": {"estimated_launch_usd": 12.5}, "evaluation": evaluation, "inventory": {}}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def _spec(repo: Path, **params: Any) -> RunSpec:
    return Catalog(repo).resolve(RunParams(**params), default_parallel=4)


async def _preflight(
    repo: Path, spec: RunSpec | None = None, *, daytona: bool = False, **kwargs: Any
) -> PreflightReport:
    spec = spec or _spec(repo)
    env = kwargs.pop("env", BOT_ENV)
    kwargs.setdefault("redact", Redactor.from_env(env))
    kwargs.setdefault("timeout_s", TIMEOUT_S)
    kwargs.setdefault("python", sys.executable)
    return await run_preflight(repo, spec, child_environ(env), daytona=daytona, **kwargs)


def _finding(report: PreflightReport, check: PreflightCheck):
    return next(finding for finding in report.findings if finding.check == check)


def _messages(report: PreflightReport) -> str:
    return "\n".join(finding.message for finding in report.findings)


async def test_clean_checkout_without_scripts_passes_and_says_what_it_skipped(repo: Path) -> None:
    report = await _preflight(repo, daytona=True)
    # On Daytona, CSB's harness runs nothing without its cost guard's preflight: that alone blocks.
    assert report.blocking_reasons == [f"{GUARD} not present: CSB launches nothing on Daytona without it"]
    assert not (await _preflight(repo)).blocking
    assert [f.check for f in report.findings] == list(PreflightCheck)
    suites = len({task["suite"] for task in fixture_json(SUITE_FIXTURE)["tasks"]})
    assert _finding(report, PreflightCheck.TASKS).message == f"{TASK_COUNT} tasks in {suites} suites"
    finding = _finding(report, PreflightCheck.ACCOUNT_HEALTH)
    assert finding.skipped and finding.message == f"{HEALTH} not present"  # shown as skipped, not ✅
    assert report.recommended_parallel is None
    assert TOKEN not in _messages(report)


async def test_missing_token_blocks_a_run_with_an_mcp_lane(repo: Path) -> None:
    report = await _preflight(repo, env={"HOME": "home"})
    token = _finding(report, PreflightCheck.SOURCEGRAPH_TOKEN)
    assert report.blocking and token.blocking
    assert "SOURCEGRAPH_ACCESS_TOKEN is not set" in token.message
    assert "mcp-remote-direct" in token.message
    assert report.blocking_reasons == [token.message]


async def test_blank_token_counts_as_missing(repo: Path) -> None:
    report = await _preflight(repo, env={"SOURCEGRAPH_ACCESS_TOKEN": "  "})
    assert _finding(report, PreflightCheck.SOURCEGRAPH_TOKEN).blocking


async def test_baseline_only_needs_no_token(repo: Path) -> None:
    spec = _spec(repo, mode=Mode.BASELINE_ONLY)
    report = await _preflight(repo, spec, env={})
    token = _finding(report, PreflightCheck.SOURCEGRAPH_TOKEN)
    assert token.ok and "not needed" in token.message


async def test_missing_task_folders_are_listed_up_to_ten(tmp_path: Path) -> None:
    repo = build_tree(tmp_path, task_folders=False)
    report = await _preflight(repo)
    folders = _finding(report, PreflightCheck.TASK_FOLDERS)
    assert folders.blocking
    assert folders.message.startswith(f"{TASK_COUNT} task folders are missing: `benchmarks/tasks/")
    assert folders.message.count("`benchmarks/tasks/") == 10
    assert folders.message.endswith(f"and {TASK_COUNT - 10} more")


async def test_one_missing_task_folder_is_named(repo: Path) -> None:
    spec = _spec(repo, suite="csb_sdlc_design")
    shutil.rmtree(repo / spec.tasks[0].path)
    folders = _finding(await _preflight(repo, spec), PreflightCheck.TASK_FOLDERS)
    assert folders.message == f"1 task folder is missing: `{spec.tasks[0].path}`"


async def test_a_missing_dockerfile_variant_blocks_naming_each_task(repo: Path) -> None:
    """As CSB's harness: the MCP lane of a direct config needs Dockerfile.sg_only, and artifact configs
    need their own variants and an instruction that expects a checkout."""
    spec = _spec(repo, suite="csb_sdlc_design")
    first, second = spec.tasks[0], spec.tasks[1]
    (repo / first.path / "environment" / "Dockerfile.sg_only").unlink()
    finding = _finding(await _preflight(repo, spec), PreflightCheck.DOCKERFILE_VARIANTS)
    assert finding.blocking
    assert finding.message.startswith(
        f"1 task cannot run these lanes: `{first.task_id}` (no environment/Dockerfile.sg_only)"
    )
    baseline_only = _spec(repo, suite="csb_sdlc_design", mode=Mode.BASELINE_ONLY)
    assert not _finding(await _preflight(repo, baseline_only), PreflightCheck.DOCKERFILE_VARIANTS).blocking

    artifact = _spec(repo, suite="csb_sdlc_design", full_config="mcp-remote-artifact")
    (repo / second.path / "instruction.md").write_text("No local repositories are pre-checked out.\n")
    message = _finding(await _preflight(repo, artifact), PreflightCheck.DOCKERFILE_VARIANTS).message
    variants = "no environment/Dockerfile.artifact_baseline"
    assert f"`{first.task_id}` ({variants}, no environment/Dockerfile.artifact_only)" in message
    assert f"`{second.task_id}` ({variants}, instruction.md says 'No local repositories" in message


async def test_no_tasks_blocks(repo: Path) -> None:
    spec = _spec(repo).model_copy(update={"tasks": ()})
    tasks = _finding(await _preflight(repo, spec), PreflightCheck.TASKS)
    assert tasks.blocking and tasks.message == f"no tasks selected from {CANONICAL}"


async def test_account_health_ready_gives_recommended_parallel(repo: Path) -> None:
    _script(repo, HEALTH, stdout=_health(ok=True, slots=12))
    report = await _preflight(repo)
    health = _finding(report, PreflightCheck.ACCOUNT_HEALTH)
    assert health.ok and health.message == "1 account(s) ready, 12 total slot(s) available"
    assert report.recommended_parallel == 12
    call = _call(repo, HEALTH)
    assert call["argv"] == ["preflight", "--format", "json", "--state-file", "runs/state/account_health.json"]
    assert Path(call["cwd"]).resolve() == repo.resolve()
    assert "SOURCEGRAPH_ACCESS_TOKEN" in call["env"]
    assert "SLACK_BOT_TOKEN" not in call["env"]


async def test_account_health_not_ok_blocks_with_its_reasons(repo: Path) -> None:
    _script(repo, HEALTH, stdout=_health(ok=False), exit=1)
    report = await _preflight(repo)
    health = _finding(report, PreflightCheck.ACCOUNT_HEALTH)
    assert health.blocking
    assert health.message == (
        "accounts not ready: No usable OAuth accounts found. (account1: expired; account2: token<90m)"
    )
    assert report.recommended_parallel is None


async def test_account_health_ok_false_blocks_even_with_exit_zero(repo: Path) -> None:
    _script(repo, HEALTH, stdout=_health(ok=False), exit=0)
    assert _finding(await _preflight(repo), PreflightCheck.ACCOUNT_HEALTH).blocking


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        (
            {"raise": "state file locked"},
            f"{HEALTH} did not print a JSON report: RuntimeError: state file locked",
        ),
        ({"stdout": "Account Readiness\n====\n"}, f"{HEALTH} did not print a JSON report: ===="),
        ({"stdout": "[1, 2]"}, f"{HEALTH} printed JSON that is not an object"),
        ({"stdout": "", "exit": 2}, f"{HEALTH} failed (exit 2): no output"),
    ],
)
async def test_account_health_breakage_blocks_with_a_readable_reason(
    repo: Path, plan: dict[str, Any], expected: str
) -> None:
    _script(repo, HEALTH, **plan)
    health = _finding(await _preflight(repo), PreflightCheck.ACCOUNT_HEALTH)
    assert health.blocking
    assert health.message == expected
    assert "Traceback" not in health.message


async def test_hung_script_and_its_children_are_stopped_and_block(repo: Path) -> None:
    _script(repo, HEALTH, stdout=_health(), sleep=30, spawn=True)
    started = time.monotonic()
    health = _finding(await _preflight(repo, timeout_s=0.5), PreflightCheck.ACCOUNT_HEALTH)
    assert time.monotonic() - started < 10
    assert health.blocking and health.message == f"{HEALTH} did not answer in 0.5 s; it was stopped"


async def test_missing_interpreter_blocks(repo: Path) -> None:
    _script(repo, HEALTH, stdout=_health())
    report = await _preflight(repo, python="no-such-python-3")
    health = _finding(report, PreflightCheck.ACCOUNT_HEALTH)
    assert health.blocking and health.message.startswith(f"cannot run {HEALTH} with `no-such-python-3`")


async def test_cost_guard_runs_only_on_daytona_with_the_spec_lanes(repo: Path) -> None:
    _script(repo, GUARD, stdout=_guard())
    spec = _spec(repo, suite="csb_sdlc_design", parallel=8)
    assert all(f.check != PreflightCheck.DAYTONA_COST for f in (await _preflight(repo, spec)).findings)
    report = await _preflight(repo, spec, daytona=True)
    guard = _finding(report, PreflightCheck.DAYTONA_COST)
    assert guard.ok and guard.message == "Daytona launch estimate $12.50"
    assert _call(repo, GUARD)["argv"] == [
        "preflight", "--selection-file", CANONICAL, "--benchmark", "csb_sdlc_design",
        "--config", "baseline-local-direct", "--config", "mcp-remote-direct",
        "--parallel-tasks", "8", "--json",
    ]  # fmt: skip


async def test_cost_guard_exit_two_blocks_with_its_blockers(repo: Path) -> None:
    blockers = ["Parallel tasks 120.00 exceeds block threshold 100.", "Active sandboxes 20.00 exceeds block."]
    _script(repo, GUARD, stdout=_guard(blockers=blockers), exit=2)
    guard = _finding(await _preflight(repo, daytona=True), PreflightCheck.DAYTONA_COST)
    assert guard.blocking
    assert guard.message == "Daytona cost guard blocks: " + " ".join(blockers)


async def test_cost_guard_warnings_show_without_blocking(repo: Path) -> None:
    _script(repo, GUARD, stdout=_guard(warnings=["Launch estimate 25.00 exceeds warn threshold 20.0."]))
    report = await _preflight(repo, daytona=True)
    guard = _finding(report, PreflightCheck.DAYTONA_COST)
    assert not guard.ok and not guard.blocking and not report.blocking
    assert (
        guard.message == "Daytona launch estimate $12.50; Launch estimate 25.00 exceeds warn threshold 20.0."
    )


async def test_cost_guard_crash_blocks(repo: Path) -> None:
    _script(repo, GUARD, stdout="", stderr="DAYTONA_API_KEY not set and not found in .env.local.\n", exit=1)
    guard = _finding(await _preflight(repo, daytona=True), PreflightCheck.DAYTONA_COST)
    assert guard.blocking
    assert guard.message == f"{GUARD} failed (exit 1): DAYTONA_API_KEY not set and not found in .env.local."


async def test_account_health_for_accounts_command(repo: Path) -> None:
    assert await account_health(repo, ENV, timeout_s=TIMEOUT_S, redact=REDACT, python=sys.executable) is None
    _script(repo, HEALTH, stdout=_health(ok=True, slots=6))
    health = await account_health(repo, ENV, timeout_s=TIMEOUT_S, redact=REDACT, python=sys.executable)
    assert isinstance(health, AccountHealth)
    assert health.ok_to_launch and health.recommended_parallel == 6
    assert [a.label for a in health.accounts] == ["account1", "account2"]
    assert health.problems() == ["account2: token<90m"]


@pytest.mark.parametrize(
    ("full_config", "env", "blocked"),
    [
        ("github-remote-direct", {"SOURCEGRAPH_ACCESS_TOKEN": "sgp"}, "GITHUB_TOKEN is not set"),
        ("github-remote-direct", {"GITHUB_TOKEN": "ghp"}, None),
        (
            "augment-remote-direct",
            {"AUGMENT_API_TOKEN": "t"},
            "AUGMENT_SESSION_AUTH or AUGMENT_API_TOKEN and",
        ),
        ("augment-remote-direct", {"AUGMENT_API_TOKEN": "t", "AUGMENT_API_URL": "u"}, None),
        ("augment-local-direct", {"AUGMENT_SESSION_AUTH": "s"}, None),
    ],
)
async def test_each_mcp_type_needs_its_own_credentials(
    repo: Path, full_config: str, env: dict[str, str], blocked: str | None
) -> None:
    """As CSB's harness: Augment and GitHub lanes need their own credentials, not Sourcegraph's."""
    spec = _spec(repo, suite="csb_sdlc_design", full_config=full_config)
    finding = _finding(await _preflight(repo, spec, env=env), PreflightCheck.SOURCEGRAPH_TOKEN)
    if blocked is None:
        assert not finding.blocking and finding.message.endswith("is set")
    else:
        assert finding.blocking and blocked in finding.message
