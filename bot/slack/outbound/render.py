"""Load what a message shows from the database into view models, at delivery time.

Rendering from the current rows (not from a snapshot taken when the row was queued) is what lets
the notifier coalesce: however many lanes finished, one update shows the latest state.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.causes import CauseGroup, group_causes, pair_causes
from bot.domain.outcome import LaneStatus
from bot.domain.policy import PolicyConfig, approvals_needed
from bot.domain.run_summary import ran_to_the_end
from bot.domain.spec import Category, LaneRole
from bot.domain.states import RERUN_NOTE_ALWAYS_NAMED, RERUN_NOTE_LANE_STATES, WAITING_LANE_STATES
from bot.domain.verdict import stored_verdict
from bot.domain.words import plural
from bot.services.checks import RequestChecks
from bot.slack.views import CardView
from bot.slack.views.events import stored_text
from bot.slack.views.run_card import LongLane, RunCardView
from bot.store import approvals, queue, requests, runs
from bot.store.records import Lane, RunRequest


async def load_card(
    session: AsyncSession, request_id: int, policy: PolicyConfig, now: datetime
) -> tuple[RunRequest, CardView] | None:
    request = await requests.get_request(session, request_id)
    if request is None or request.id is None:
        return None
    view = CardView(
        request_id=request.id,
        spec=request.spec,
        spec_hash=request.spec_hash,
        requester=request.requester,
        state=request.state,
        revision=request.revision,
        checks=RequestChecks.model_validate_json(request.checks_json),
        approvals=await approvals.approvers(session, request.id, request.revision),
        approvals_needed=approvals_needed(policy, Category(request.category)),
        change_note=stored_text(request.change_note) if request.change_note else None,
        expires_at=request.expires_at,
        decided_by=request.decided_by,
        decided_at=request.decided_at,
        reason=request.reason,
        run=await load_run_card(session, runs.run_id_of(request.id), now),
        rerun_of=await _rerun_note(session, request),
        budget_override_by=request.budget_override_by,
    )
    return request, view


async def _rerun_note(session: AsyncSession, request: RunRequest) -> str | None:
    """What the earlier run's lanes of these tasks ended as ("Rerun of #1: 2 failed, 0 errored lanes")."""
    if request.rerun_of is None:
        return None
    tasks = {task.task_id for task in request.spec.tasks}
    lanes = [lane for lane in await runs.run_lanes(session, request.rerun_of) if lane.task_id in tasks]
    counted = {status: sum(1 for lane in lanes if lane.state is status) for status in RERUN_NOTE_LANE_STATES}
    counts = [
        f"{n} {status.value}" for status, n in counted.items() if n or status in RERUN_NOTE_ALWAYS_NAMED
    ]
    return f"Rerun of #{request.rerun_of}: {', '.join(counts)} lanes ({plural(len(tasks), 'task')} run again)"


async def load_run_card(session: AsyncSession, run_id: int, now: datetime) -> RunCardView | None:
    run = await runs.get_run(session, run_id)
    if run is None:
        return None
    lanes = await runs.run_lanes(session, run_id)
    pairs: dict[int, list[Lane]] = {}
    counts: dict[str, dict[LaneStatus, int]] = {}
    for lane in lanes:
        pairs.setdefault(lane.pair_index, []).append(lane)
        by_status = counts.setdefault(lane.role, {})
        by_status[lane.state] = by_status.get(lane.state, 0) + 1
    figures = await queue.queue_figures(session, run_id)
    done = [pair for pair in pairs.values() if all(ran_to_the_end(lane.state) for lane in pair)]
    ends = [lane.finished_at for pair in done for lane in pair if lane.finished_at is not None]
    return RunCardView(
        run_id=run_id,
        state=run.state,
        pairs_done=len(done),
        pairs_total=len(pairs),
        lanes_running=sum(1 for lane in lanes if lane.state is LaneStatus.RUNNING),
        lanes_queued=sum(1 for lane in lanes if lane.state is LaneStatus.QUEUED),
        lanes_cancelled=sum(1 for lane in lanes if lane.state is LaneStatus.CANCELLED),
        lanes_retrying=sum(1 for lane in lanes if lane.state is LaneStatus.QUEUED and lane.infra_failures),
        counts=dict(sorted(counts.items(), key=lambda item: item[0] != LaneRole.BASELINE.value)),
        queue_position=figures.position,
        eta_seconds=figures.eta_sec,
        started_at=run.started_at,
        finished_at=run.finished_at,
        progress_at=max(ends, default=None),
        now=now,
        stopped_by=run.stopped_by,
        stop_reason=run.stop_reason,
        paused_reason=run.paused_reason,
        causes=_causes(pairs),
        tasks_not_run=sum(
            1 for pair in pairs.values() if any(lane.state in WAITING_LANE_STATES for lane in pair)
        ),
        long_lanes=tuple(
            LongLane(
                f"{lane.task_id}/{lane.role}",
                lane.attempt,
                now - lane.started_at,
                timedelta(seconds=lane.timeout_sec),
            )
            for lane in lanes
            if lane.state is LaneStatus.RUNNING
            and lane.long_noted == lane.attempt
            and lane.started_at is not None
        ),
    )


def _causes(pairs: dict[int, list[Lane]]) -> tuple[CauseGroup, ...]:
    """The ended lanes' failures by cause, from the verdicts stored when they ended."""
    items = []
    for _, pair in sorted(pairs.items()):
        ended = {
            lane.role: (lane.state, stored_verdict(lane.verdict_json)) for lane in pair if lane.state.is_final
        }
        items += pair_causes(pair[0].task_id, ended)
    return tuple(group_causes(items))
