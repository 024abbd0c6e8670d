"""Texts of the ephemeral replies to `/csb` subcommands (mrkdwn, each under Slack's section limit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.csb.harbor_run import LaunchConfig, job_name, jobs_dir, lane_argv, run_dir_name, shell_line
from bot.csb.lane_env import lane_env, lane_vars
from bot.csb.preflight import ACCOUNT_HEALTH_SCRIPT, AccountHealth
from bot.csb.task_copy import SG_ONLY
from bot.domain.policy import BOT_ACTOR
from bot.domain.spec import Category, LanePlan, LaneRole, RunSpec, TaskRef
from bot.domain.words import plural
from bot.services.checks import RequestChecks
from bot.services.queries import RunProgress
from bot.services.refusals import REFUSED
from bot.slack.views.approval_card import check_lines
from bot.slack.views.estimate import budget_lines_text, estimate_text
from bot.slack.views.format import SECTION_LIMIT, chunk_lines, code, shown, suite_text, user, when
from bot.slack.views.run_card import eta_text
from bot.store.records import AuditEvent

PLAN_COMMANDS_SHOWN = 2  # tasks whose lane commands a dry run prints


def _fit(lines: Sequence[str]) -> str:
    """One reply: whole lines up to Slack's section limit, then how many lines were left out."""
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        if used + len(line) + 1 > SECTION_LIMIT - 60:
            kept.append(f"… and {plural(len(lines) - index, 'more line')} not shown")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


def plan_text(spec: RunSpec, checks: RequestChecks, launch: LaunchConfig) -> list[str]:
    """`--dry-run`: what approval would launch (lane commands as the engine runs them), requesting
    nothing. As many replies as it takes, each of whole lines, so nothing is cut mid-sentence."""
    params = spec.params
    lines = [
        f"*Dry run* (nothing was requested): `{params.mode.value}` run of {code(params.model)} "
        f"on {suite_text(spec)}",
        f"{plural(len(spec.tasks), 'task')} · {plural(spec.lane_count, 'lane')} · "
        f"{plural(spec.parallel, 'slot')} · category `{params.category.value}`",
        "Tasks per suite: "
        + ", ".join(f"{code(suite)} {count}" for suite, count in sorted(spec.suites.items())),
        "Lanes: " + ", ".join(f"{lane.role.value} {code(lane.config)}" for lane in spec.lanes),
        "First lane commands (cwd: the CSB checkout):",
    ]
    lines += [
        code(_planned_command(spec, task, lane, launch), SECTION_LIMIT // 2)
        for task in spec.tasks[:PLAN_COMMANDS_SHOWN]
        for lane in spec.lanes
    ]
    if any(lane.role is LaneRole.MCP for lane in spec.lanes):
        lines.append(
            "(An MCP lane, and an artifact baseline, runs a copy of its task with its Dockerfile variant "
            f"(e.g. `environment/{SG_ONLY}`) swapped in, with its own `--job-name`.)"
        )
    if checks.estimate is not None:  # what the card would show of cost and budget
        lines += [estimate_text(checks.estimate), *budget_lines_text(checks.budget)]
    lines += ["*Preflight*", *check_lines(checks)]
    if checks.blocking_reasons:
        lines.append(":x: As it stands this request could not be approved.")
    return chunk_lines(lines)


def _planned_command(spec: RunSpec, task: TaskRef, lane: LanePlan, launch: LaunchConfig) -> str:
    """The lane's command as the engine would build it, with placeholders for what approval decides
    (the time, the run and lane numbers, the account's HOME)."""
    run_dir = run_dir_name(task.suite, spec.params.model, "<time>", "<run>")
    jobs = jobs_dir(spec.params.category.value, run_dir, lane.config)
    job = job_name("<run>", "<lane>", "<attempt>")
    variables = lane_vars(
        launch.repo,
        home="<account home>",
        config=lane.config,
        mcp_type=lane.mcp_type,
        mcp_lane=lane.role is LaneRole.MCP,
        task_path=task.path,
        suite=task.suite,
        task_id=task.task_id,
        jobs_dir=jobs,
        dockerfile=None,
    )
    env = lane_env(launch.base_env, variables)
    argv = lane_argv(launch, task.path, spec.params.model, jobs, job, env)
    return shell_line(argv, {name: env[name] for name in ("BASELINE_MCP_TYPE", "INSTRUCTION_VARIANT")})


def checkout_values(
    task_file: str,
    suites: dict[str, int],
    full_configs: Sequence[str],
    parallel: Mapping[Category, tuple[int, int]],
) -> str:
    """What `/csb help run` adds about this deployment: the values its checkout and policy allow."""
    bounds = "; ".join(
        f"{kind.value} at most {most} (default {default})" for kind, (default, most) in parallel.items()
    )
    return "\n".join(
        [
            "*In this checkout*",
            f"• suites in {code(task_file)}: " + ", ".join(code(key) for key in sorted(suites)),
            "• `--full-config`: " + ", ".join(code(name) for name in full_configs),
            f"• `--parallel`: {bounds}; a paired run needs at least 2",
        ]
    )


def suites_text(task_file: str, suites: dict[str, int]) -> str:
    total = sum(suites.values())
    lines = [f"*Suites in {code(task_file)}* ({plural(total, 'task')})"]
    lines += [f"• {code(key)} {count}" for key, count in sorted(suites.items())]
    return _fit(lines)


def status_text(runs: Sequence[RunProgress]) -> str:
    if not runs:
        return "No run is queued or running."
    lines = ["*Active runs* (`/csb status <run>` shows one run's card)"]
    lines += [_status_line(run) for run in runs]
    return _fit(lines)


def _status_line(run: RunProgress) -> str:
    if not run.visible:
        return f"• #{run.run_id} {run.state} (details in its channel)"
    where = f" #{run.queue_position} in the queue" if run.queue_position else ""
    eta = eta_text(run.state, run.eta_seconds)
    eta = f", {eta}" if eta else ""
    return (
        f"• #{run.run_id} {run.state}{where}: {run.lanes_done}/{plural(run.lanes_total, 'lane')} done, "
        f"{run.lanes_running} running{eta} ({code(run.run_dir)})"
    )


_WHO_SEES = "only in its channel or to its requester, approvers and admins"


def hidden_status_text(run: RunProgress) -> str:
    """`/csb status <run>` for someone who may not see the run: one line, no parameters."""
    return f"Run #{run.run_id} is {run.state}; its details are shown {_WHO_SEES}."


def hidden_audit_text(request_id: int, state: str) -> str:
    return f"Request #{request_id} is {state}; its audit trail is shown {_WHO_SEES}."


def audit_text(request_id: int, events: Sequence[AuditEvent]) -> str:
    """What happened first, in order; refused attempts after it, each kind once with its count, newest
    first: any number of refused clicks cannot push a decision or a cancel out of the one reply."""
    done = [event for event in events if not event.action.startswith(REFUSED)]
    refused: dict[tuple[str, str, str], list[AuditEvent]] = {}
    for event in events:
        if event.action.startswith(REFUSED):
            refused.setdefault((event.action, event.actor, event.reason or ""), []).append(event)
    lines = [f"*Audit of #{request_id}*", *(_audit_line(event) for event in done)]
    if refused:
        lines.append(f"*Refused* ({plural(sum(map(len, refused.values())), 'attempt')}), newest first:")
        for same in sorted(refused.values(), key=lambda group: group[-1].at, reverse=True):
            times = f" ({len(same)} times, first {when(same[0].at)})" if len(same) > 1 else ""
            lines.append(_audit_line(same[-1]) + times)
    return _fit(lines)


def _audit_line(event: AuditEvent) -> str:
    actor = event.actor if event.actor == BOT_ACTOR else user(event.actor)
    reason = f" — {shown(event.reason)}" if event.reason else ""
    return f"• {when(event.at)} *{event.action}* by {actor} · spec `{event.spec_hash[:12]}`{reason}"


def accounts_text(health: AccountHealth | None) -> str:
    if health is None:
        return (
            f"This CSB checkout has no `{ACCOUNT_HEALTH_SCRIPT}`, so the bot does not judge accounts "
            "and does not block launches on them."
        )
    verdict = ":white_check_mark: ok to launch" if health.ok_to_launch else ":no_entry: not ok to launch"
    lines = [f"*Accounts*: {verdict} — {shown(health.summary)}"]
    if health.recommended_parallel is not None:
        lines.append(f"Recommended parallel: {health.recommended_parallel}")
    lines += [
        f"• {code(account.label)} {shown(account.status)}, {plural(account.available_slots, 'free slot')}"
        + (f" ({shown(', '.join(account.reasons))})" if account.reasons else "")
        for account in health.accounts
    ]
    return _fit(lines)
