"""Checks run before an approval card is posted and again at approval: can this spec launch right now?

CSB's own preflight scripts (when the checkout has them) run as asyncio child processes with a time
limit, so a script that hangs holds up only the request that waits for it, never the event loop nor the
worker threads everyone else shares; folder checks run in a worker thread. A script that crashes, hangs
or prints something other than JSON blocks with a readable reason rather than a traceback: an unjudged
launch is not a safe one. Everything a script prints passes through the redactor before it is parsed,
so no secret of the bot's environment reaches a card, a reply or the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict

from bot.csb.catalog import Catalog
from bot.csb.child_env import ChildEnv, spawn_env
from bot.csb.disk_space import disk_space
from bot.csb.docker_daemon import PING_TIMEOUT_SEC, docker_problem
from bot.csb.paths import inside
from bot.csb.task_copy import variant_problems
from bot.domain.errors import InfraError
from bot.domain.mrkdwn import clip
from bot.domain.redact import Redactor
from bot.domain.spec import RunSpec
from bot.domain.words import plural

log = logging.getLogger(__name__)

ACCOUNT_HEALTH_SCRIPT = "scripts/infra/account_health.py"
ACCOUNT_HEALTH_STATE = "runs/state/account_health.json"
# What CSB's harness tells the script when it asks which homes are ready (a home whose token has under
# 90 minutes left, or that is held or busy, is not).
HARNESS_SESSIONS_PER_ACCOUNT = 6
HARNESS_MIN_TOKEN_MINUTES = 90
COST_GUARD_SCRIPT = "scripts/infra/daytona_cost_guard.py"
TOKEN_VARIABLE = "SOURCEGRAPH_ACCESS_TOKEN"

_LIST_LIMIT = 10
_OUTPUT_LIMIT = 300
_REAP_S = 5.0  # after SIGKILL, how long to wait for the process to be gone before letting it be


class PreflightCheck(StrEnum):
    TASKS = "tasks"
    TASK_FOLDERS = "task_folders"
    DOCKERFILE_VARIANTS = "dockerfile_variants"
    SOURCEGRAPH_TOKEN = "sourcegraph_token"
    DOCKER = "docker"
    DISK = "disk"
    ACCOUNT_HEALTH = "account_health"
    DAYTONA_COST = "daytona_cost"


class Finding(BaseModel):
    """One check's result; `ok=False, blocking=False` is a warning shown on the card."""

    model_config = ConfigDict(frozen=True)

    check: str
    ok: bool
    blocking: bool
    message: str
    skipped: bool = False  # the check did not run: shown as skipped, never as passed


class PreflightReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    findings: tuple[Finding, ...]
    recommended_parallel: int | None = None  # CSB's account_health `recommended_parallel_jobs`, when > 0

    @property
    def blocking(self) -> bool:
        return any(finding.blocking for finding in self.findings)

    @property
    def blocking_reasons(self) -> list[str]:
        """Why Approve is disabled, one line per blocking check."""
        return [finding.message for finding in self.findings if finding.blocking]


class AccountStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    status: str  # CSB's: ready, ready_with_load, busy, token_low, blocked
    available_slots: int = 0
    reasons: tuple[str, ...] = ()


class AccountHealth(BaseModel):
    """CSB's `account_health.py preflight` verdict, for the card and `/csb accounts`."""

    model_config = ConfigDict(frozen=True)

    ok_to_launch: bool
    summary: str
    recommended_parallel: int | None
    accounts: tuple[AccountStatus, ...]
    ready_homes: frozenset[str] | None = None  # when asked about homes: those the report calls ready

    def problems(self) -> list[str]:
        """`account2: expired`-style lines for the accounts that cannot take work."""
        return [
            f"{account.label}: {', '.join(account.reasons) or account.status}"
            for account in self.accounts
            if account.status not in ("ready", "ready_with_load")
        ]


async def run_preflight(
    repo: Path,
    spec: RunSpec,
    env: ChildEnv,
    *,
    daytona: bool,
    timeout_s: float,
    redact: Redactor,
    python: str = "python3",
    docker: bool = False,
    docker_ping_s: float = PING_TIMEOUT_SEC,
) -> PreflightReport:
    """Every check, in the order the card lists them; scripts run with cwd the checkout. `docker`:
    Harbor's environment is local Docker, so the daemon must answer, as CSB's `check-infra` asks,
    within `docker_ping_s`.

    Whatever the scripts print passes through `redact` (the secrets in `env` and the bot's own) first.
    """
    folders = await asyncio.to_thread(_task_folders, repo, spec)
    variants = await asyncio.to_thread(_variants, repo, spec)
    findings = [_tasks(spec), folders, variants, _token(spec, env)]
    findings.append(
        await _docker(env, docker_ping_s) if docker else _skipped(PreflightCheck.DOCKER, "Docker not used")
    )
    findings.append(await asyncio.to_thread(_disk, repo))
    health_finding, recommended = await _account_health_finding(repo, env, python, timeout_s, redact)
    findings.append(health_finding)
    if daytona:
        findings.append(await _cost_guard(repo, spec, env, python, timeout_s, redact))
    safe = tuple(finding.model_copy(update={"message": redact(finding.message)}) for finding in findings)
    return PreflightReport(findings=safe, recommended_parallel=recommended)


def has_account_health(repo: Path) -> bool:
    return (repo / ACCOUNT_HEALTH_SCRIPT).is_file()


async def account_health(
    repo: Path,
    env: ChildEnv,
    *,
    timeout_s: float,
    redact: Redactor,
    python: str = "python3",
    homes: Sequence[str] = (),
    real_home: str = "",
) -> AccountHealth | None:
    """CSB's account verdict, or None when the checkout has no account_health.py (nothing to judge with).
    The one reader of the script, for the card, `/csb accounts` and the engine: given `homes`, it asks as
    the harness does before a batch, and the verdict names the homes that are ready.

    InfraError when the script crashes, hangs or prints something other than its JSON report.
    """
    if not has_account_health(repo):
        return None
    argv = [python, ACCOUNT_HEALTH_SCRIPT, "preflight", "--format", "json"]
    argv += ["--state-file", ACCOUNT_HEALTH_STATE]
    if homes:
        argv += ["--real-home", real_home, "--sessions-per-account", str(HARNESS_SESSIONS_PER_ACCOUNT)]
        argv += ["--min-token-minutes", str(HARNESS_MIN_TOKEN_MINUTES)]
        for home in homes:
            argv += ["--home", home]
    code, out, err = await _run_script(repo, argv, env, timeout_s, redact)
    if code not in (0, 1):
        raise InfraError(f"{ACCOUNT_HEALTH_SCRIPT} failed (exit {code}): {_tail(err or out) or 'no output'}")
    data = _json_object(ACCOUNT_HEALTH_SCRIPT, out, err)
    ok = data.get("ok_to_launch") is True and code == 0
    recommended = data.get("recommended_parallel_jobs")
    return AccountHealth(
        ok_to_launch=ok,
        summary=redact(str(data.get("summary") or ("accounts ready" if ok else "no account is ready"))),
        recommended_parallel=recommended if _is_count(recommended) and recommended > 0 else None,
        accounts=tuple(
            _account(entry, redact) for entry in _list(data.get("accounts")) if isinstance(entry, dict)
        ),
        ready_homes=_ready_homes(data.get("ready_homes")),
    )


def _ready_homes(value: Any) -> frozenset[str] | None:
    return frozenset(str(home) for home in value) if isinstance(value, list) else None


def _tasks(spec: RunSpec) -> Finding:
    count = len(spec.tasks)
    if count == 0:
        return _block(PreflightCheck.TASKS, f"no tasks selected from {spec.task_file}")
    suites = len(spec.suites)
    where = f"{suites} suites" if suites > 1 else f"suite {next(iter(spec.suites))}"
    return _ok(PreflightCheck.TASKS, f"{count} task{'s' if count != 1 else ''} in {where}")


def _task_folders(repo: Path, spec: RunSpec) -> Finding:
    outside = [task.path for task in spec.tasks if not _stays_in(repo, task.path)]
    if outside:  # a symlink out of the checkout: its files would be copied and run as a task's
        shown = ", ".join(f"`{path}`" for path in outside[:_LIST_LIMIT])
        return _block(PreflightCheck.TASK_FOLDERS, f"task folders lead outside the CSB checkout: {shown}")
    missing = Catalog(repo).missing_task_folders(spec)
    if not missing:
        return _ok(PreflightCheck.TASK_FOLDERS, "every task folder is present")
    shown = ", ".join(f"`{path}`" for path in missing[:_LIST_LIMIT])
    more = f" and {len(missing) - _LIST_LIMIT} more" if len(missing) > _LIST_LIMIT else ""
    noun = "folder is" if len(missing) == 1 else "folders are"
    return _block(PreflightCheck.TASK_FOLDERS, f"{len(missing)} task {noun} missing: {shown}{more}")


def _variants(repo: Path, spec: RunSpec) -> Finding:
    """CSB's harness blocks the batch when a lane's Dockerfile variant is missing (or, in artifact mode,
    the instruction expects no checkout); a missing folder is reported by the folder check."""
    lanes = [(lane.role, lane.config) for lane in spec.lanes]
    problems = [
        f"`{task.task_id}` ({', '.join(found)})"
        for task in spec.tasks
        if (repo / task.path).is_dir() and (found := variant_problems(repo, task.path, lanes))
    ]
    if not problems:
        return _ok(PreflightCheck.DOCKERFILE_VARIANTS, "every lane's Dockerfile variant is present")
    shown = ", ".join(problems[:_LIST_LIMIT])
    more = f" and {len(problems) - _LIST_LIMIT} more" if len(problems) > _LIST_LIMIT else ""
    return _block(
        PreflightCheck.DOCKERFILE_VARIANTS,
        f"{plural(len(problems), 'task')} cannot run these lanes: {shown}{more} "
        "(CSB: run scripts/generate_sgonly_dockerfiles.py for them)",
    )


async def _docker(env: Mapping[str, str], ping_s: float) -> Finding:
    problem = await docker_problem(env, ping_s)
    if problem is not None:
        return _block(PreflightCheck.DOCKER, problem)
    return _ok(PreflightCheck.DOCKER, "Docker daemon answers")


def _disk(repo: Path) -> Finding:
    """CSB's thresholds: under 5 GB free blocks, under 20 GB warns."""
    try:
        space = disk_space(repo)
    except OSError as exc:
        return _block(PreflightCheck.DISK, f"free disk not measured: {exc.strerror or exc}")
    if space.blocking:
        return _block(PreflightCheck.DISK, space.describe())
    if space.low:
        return Finding(check=PreflightCheck.DISK, ok=False, blocking=False, message=space.describe())
    return _ok(PreflightCheck.DISK, space.describe())


def _stays_in(repo: Path, task_path: str) -> bool:
    try:
        inside(repo, repo / task_path)
    except InfraError:
        return False
    return True


def _token(spec: RunSpec, env: Mapping[str, str]) -> Finding:
    """The MCP lane's credentials, by its BASELINE_MCP_TYPE as CSB's harness checks them: Augment's
    session or API token and URL, a GitHub token, else the Sourcegraph token."""
    mcp_lanes = [lane for lane in spec.lanes if lane.mcp_type != "none"]
    if not mcp_lanes:
        return _skipped(PreflightCheck.SOURCEGRAPH_TOKEN, f"{TOKEN_VARIABLE} not needed: no MCP lane")
    lane = mcp_lanes[0]
    options = credential_options(lane.mcp_type)
    present = next((option for option in options if all(env.get(name, "").strip() for name in option)), None)
    if present is not None:
        return _ok(PreflightCheck.SOURCEGRAPH_TOKEN, f"{' and '.join(present)} is set")
    wanted = " or ".join(" and ".join(option) for option in options)
    return _block(
        PreflightCheck.SOURCEGRAPH_TOKEN,
        f"{wanted} is not set in the bot's environment; the {lane.config} lane needs it "
        "(CSB's own script would silently run baseline only)",
    )


def credential_options(mcp_type: str) -> list[tuple[str, ...]]:
    if mcp_type.startswith("augment_"):
        return [("AUGMENT_SESSION_AUTH",), ("AUGMENT_API_TOKEN", "AUGMENT_API_URL")]
    if mcp_type == "github_remote":
        return [("GITHUB_TOKEN",)]
    return [(TOKEN_VARIABLE,)]


async def _account_health_finding(
    repo: Path, env: ChildEnv, python: str, timeout_s: float, redact: Redactor
) -> tuple[Finding, int | None]:
    check = PreflightCheck.ACCOUNT_HEALTH
    try:
        health = await account_health(repo, env, timeout_s=timeout_s, redact=redact, python=python)
    except InfraError as exc:
        return _block(check, str(exc)), None
    if health is None:
        return _skipped(check, f"{ACCOUNT_HEALTH_SCRIPT} not present"), None
    if not health.ok_to_launch:
        problems = "; ".join(health.problems())
        detail = f" ({problems})" if problems else ""
        return _block(check, f"accounts not ready: {health.summary}{detail}"), None
    return _ok(check, health.summary), health.recommended_parallel


async def _cost_guard(
    repo: Path, spec: RunSpec, env: ChildEnv, python: str, timeout_s: float, redact: Redactor
) -> Finding:
    check = PreflightCheck.DAYTONA_COST
    if not (repo / COST_GUARD_SCRIPT).is_file():  # CSB's harness cannot run its preflight either: blocked
        return _block(check, f"{COST_GUARD_SCRIPT} not present: CSB launches nothing on Daytona without it")
    argv = [python, COST_GUARD_SCRIPT, "preflight", "--selection-file", spec.task_file]
    if spec.params.suite:
        argv += ["--benchmark", spec.params.suite]
    for lane in spec.lanes:
        argv += ["--config", lane.config]
    # A bot slot is one Harbor process (one sandbox); passing slots, not pairs, errs on the side of blocking.
    argv += ["--parallel-tasks", str(spec.parallel), "--json"]
    try:
        code, out, err = await _run_script(repo, argv, env, timeout_s, redact)
        if code not in (0, 2):
            raise InfraError(f"{COST_GUARD_SCRIPT} failed (exit {code}): {_tail(err or out) or 'no output'}")
        data = _json_object(COST_GUARD_SCRIPT, out, err)
    except InfraError as exc:
        return _block(check, str(exc))
    evaluation = data.get("evaluation")
    evaluation = evaluation if isinstance(evaluation, dict) else {}
    blockers = [str(item) for item in _list(evaluation.get("blockers"))]
    warnings = [str(item) for item in _list(evaluation.get("warnings"))]
    if code == 2 or blockers:
        return _block(check, "Daytona cost guard blocks: " + (" ".join(blockers) or "see its report"))
    estimate = _estimate(data)
    if warnings:
        return Finding(check=check, ok=False, blocking=False, message=f"{estimate}; " + " ".join(warnings))
    return _ok(check, estimate)


def _estimate(data: Mapping[str, Any]) -> str:
    estimate = data.get("estimate")
    usd = estimate.get("estimated_launch_usd") if isinstance(estimate, dict) else None
    if _is_number(usd):
        return f"Daytona launch estimate ${usd:,.2f}"
    return "Daytona cost guard passed"


async def _run_script(
    repo: Path, argv: Sequence[str], env: ChildEnv, timeout_s: float, redact: Redactor
) -> tuple[int, str, str]:
    """Run one CSB script in its own process group, so a timeout also ends whatever it started.

    Its output is redacted here, before anything parses, stores or shows it.
    """
    script = argv[1]
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=repo,
            env=spawn_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise InfraError(f"cannot run {script} with `{argv[0]}`: {exc.strerror or exc}") from exc
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        await _stop(process, script)
        raise InfraError(f"{script} did not answer in {timeout_s:g} s; it was stopped") from None
    except asyncio.CancelledError:
        await _stop(process, script)  # the request was abandoned: its script must not linger
        raise
    code = process.returncode if process.returncode is not None else -1
    return code, redact(out.decode("utf-8", "replace")), redact(err.decode("utf-8", "replace"))


async def _stop(process: asyncio.subprocess.Process, script: str) -> None:
    """SIGKILL the script's process group, then wait a little for it to be gone (pipes closed)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        await asyncio.wait_for(process.wait(), _REAP_S)
    except TimeoutError:
        log.warning("%s (pid %s) was killed but a child still holds its output open", script, process.pid)


def _json_object(script: str, out: str, err: str) -> dict[str, Any]:
    try:
        data = json.loads(out)
    except json.JSONDecodeError as exc:
        detail = _tail(err) or _tail(out) or "no output"
        raise InfraError(f"{script} did not print a JSON report: {detail}") from exc
    if not isinstance(data, dict):
        raise InfraError(f"{script} printed JSON that is not an object")
    return data


def _account(entry: Mapping[str, Any], redact: Redactor) -> AccountStatus:
    slots = entry.get("available_slots")
    return AccountStatus(
        label=redact(str(entry.get("label") or entry.get("home") or "account")),
        status=redact(str(entry.get("status") or "unknown")),
        available_slots=slots if _is_count(slots) else 0,
        reasons=tuple(redact(str(reason)) for reason in _list(entry.get("reasons"))),
    )


def _tail(text: str) -> str:
    """The last non-empty line: where a Python traceback states its error."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1]
    return clip(last, _OUTPUT_LIMIT)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ok(check: PreflightCheck, message: str) -> Finding:
    return Finding(check=check, ok=True, blocking=False, message=message)


def _skipped(check: PreflightCheck, why: str) -> Finding:
    return Finding(check=check, ok=True, blocking=False, message=why, skipped=True)


def _block(check: PreflightCheck, message: str) -> Finding:
    return Finding(check=check, ok=False, blocking=True, message=message)
