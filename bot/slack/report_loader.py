"""Gather a finished run for its report: lane rows from the database, with CSB's verdicts stored when each
lane ended (tokens and cost as CSB's cost_report.py takes them); a lane that ended before verdicts were
kept reads its usage from its trial file, as the report did then."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.csb.command import job_name, run_folders
from bot.csb.results import attempt_trial, trial_usage
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole, Mode, RunSpec
from bot.domain.states import RunState
from bot.domain.stats import LaneResult, PairOutcome
from bot.domain.verdict import stored_verdict
from bot.slack.views.report import ReportView
from bot.store.models import Lane, Run, RunRequest

_ABSENT = LaneResult(status=LaneStatus.CANCELLED)  # the lane a single-lane run does not have


def build_report_view(repo: Path, run: Run, request: RunRequest, lanes: Sequence[Lane]) -> ReportView:
    """Blocking (reads result.json files): call it in a thread."""
    spec = RunSpec.model_validate_json(request.spec_json)
    pairs: dict[int, dict[str, Lane]] = {}
    for lane in lanes:
        pairs.setdefault(lane.pair_index, {})[lane.role] = lane
    outcomes = [_pair(repo, by_role) for _, by_role in sorted(pairs.items())]
    single = {Mode.BASELINE_ONLY: LaneRole.BASELINE, Mode.FULL_ONLY: LaneRole.MCP}.get(spec.params.mode)
    return ReportView(
        run_id=run.id or 0,
        output_dirs=run_folders(request.category, run.run_dir, (lane.suite for lane in lanes)),
        title=spec.suite_label,
        model=spec.params.model,
        pairs=outcomes,
        single_lane=single,
        cancelled=run.state is RunState.CANCELLED,
        stopped_by=run.stopped_by,
        stop_reason=run.stop_reason,
    )


def _pair(repo: Path, by_role: dict[str, Lane]) -> PairOutcome:
    first = next(iter(by_role.values()))
    return PairOutcome(
        task_id=first.task_id,
        suite=first.suite,
        baseline=_result(repo, by_role.get(LaneRole.BASELINE.value)),
        mcp=_result(repo, by_role.get(LaneRole.MCP.value)),
    )


def _result(repo: Path, lane: Lane | None) -> LaneResult:
    if lane is None:
        return _ABSENT
    verdict = stored_verdict(lane.verdict_json)
    if verdict is not None:
        return LaneResult(
            status=lane.state,
            reward=lane.reward,
            input_tokens=verdict.tokens.input,
            output_tokens=verdict.tokens.output,
            cost_usd=verdict.cost_usd,
            reason=lane_reason(lane),
            verdict=verdict,
        )
    usage: dict[str, int | float] = {}
    job = job_name(lane.run_id, lane.id or 0, lane.attempt)
    trial = attempt_trial(repo / lane.jobs_dir, job, lane.task_id)
    if trial is not None:
        usage = trial_usage(trial)
    return LaneResult(
        status=lane.state,
        reward=lane.reward,
        input_tokens=_int(usage.get("input_tokens")),
        output_tokens=_int(usage.get("output_tokens")),
        cost_usd=float(usage["cost_usd"]) if "cost_usd" in usage else None,
        reason=lane_reason(lane),
    )


def lane_reason(lane: Lane) -> str | None:
    """Why a lane ended as it did: the exception's type and message when the trial raised one, else
    what the bot saw (Harbor's exit without a result, the time limit) and where the lane's log is."""
    if lane.state not in (LaneStatus.ERRORED, LaneStatus.TIMEOUT):
        return lane.reason
    if lane.exception_type:
        if lane.reason and lane.exception_type not in lane.reason:
            return f"{lane.exception_type}: {lane.reason}"
        return lane.reason or lane.exception_type
    reason = lane.reason or f"{lane.state.value} without a recorded reason"
    if not lane.log_path:
        return reason
    head, _, evidence = reason.partition("; log: ")  # the log's telling line, when the bot found one
    return f"{head}; log: {lane.log_path}" + (f"; it ends: {evidence}" if evidence else "")


def _int(value: int | float | None) -> int | None:
    return None if value is None else int(value)
