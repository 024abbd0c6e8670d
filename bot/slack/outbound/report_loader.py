"""Gather a finished run for its report from the database only: lane rows with what each lane produced,
stored when it ended (status, reward, reason as fields, CSB's verdicts with tokens and cost as CSB's
cost_report.py takes them). No file of the run is read, so the report is the same after its folder moves."""

from __future__ import annotations

from collections.abc import Sequence

from bot.csb.harbor_run import run_folders
from bot.domain.outcome import LaneStatus
from bot.domain.reason import LaneReason, ReasonKind
from bot.domain.spec import Category, LaneRole, Mode
from bot.domain.states import RunState
from bot.domain.stats import LaneResult, PairOutcome
from bot.domain.verdict import stored_verdict
from bot.services.checks import RequestChecks
from bot.slack.views.report import ReportView
from bot.store.records import Lane, Run, RunRequest

_ABSENT = LaneResult(status=LaneStatus.CANCELLED)  # the lane a single-lane run does not have


def build_report_view(run: Run, request: RunRequest, lanes: Sequence[Lane]) -> ReportView:
    """The report of a run as the database holds it (no file is read)."""
    spec = request.spec
    pairs: dict[int, dict[str, Lane]] = {}
    for lane in lanes:
        pairs.setdefault(lane.pair_index, {})[lane.role] = lane
    outcomes = [_pair(by_role) for _, by_role in sorted(pairs.items())]
    single = {Mode.BASELINE_ONLY: LaneRole.BASELINE, Mode.FULL_ONLY: LaneRole.MCP}.get(spec.params.mode)
    return ReportView(
        run_id=run.id,
        output_dirs=run_folders(request.category, run.run_dir, (lane.suite for lane in lanes)),
        title=spec.suite_label,
        model=spec.params.model,
        pairs=outcomes,
        single_lane=single,
        cancelled=run.state is RunState.CANCELLED,
        stopped_by=run.stopped_by,
        stop_reason=run.stop_reason,
        promotable=request.category == Category.STAGING.value and run.state is RunState.FINISHED,
        estimate=RequestChecks.model_validate_json(request.checks_json).estimate,
        wall_seconds=(
            (run.finished_at - run.started_at).total_seconds()
            if run.started_at is not None and run.finished_at is not None
            else None
        ),
    )


def _pair(by_role: dict[str, Lane]) -> PairOutcome:
    first = next(iter(by_role.values()))
    return PairOutcome(
        task_id=first.task_id,
        suite=first.suite,
        baseline=_result(by_role.get(LaneRole.BASELINE.value)),
        mcp=_result(by_role.get(LaneRole.MCP.value)),
    )


def _result(lane: Lane | None) -> LaneResult:
    """A lane as it ended; one that ended before verdicts were kept has no tokens or cost (None)."""
    if lane is None:
        return _ABSENT
    return LaneResult(
        status=lane.state,
        reward=lane.reward,
        input_tokens=lane.input_tokens,
        output_tokens=lane.output_tokens,
        cost_usd=lane.cost_usd,
        reason=lane_reason(lane),
        verdict=stored_verdict(lane.verdict_json),
    )


def lane_reason(lane: Lane) -> LaneReason:
    """The lane's reason from its columns, as `bot.store.lanes.finish_lanes` stored it."""
    return LaneReason(
        kind=ReasonKind(lane.reason_kind) if lane.reason_kind in set(ReasonKind) else None,
        message=lane.reason,
        exception_type=lane.exception_type,
        log_line=lane.log_line,
        log_path=lane.log_path or None,
        fingerprint=lane.fingerprint,
    )
