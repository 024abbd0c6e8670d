"""Load what a message shows from the database into view models, at delivery time.

Rendering from the current rows (not from a snapshot taken when the row was queued) is what lets
the notifier coalesce: however many lanes finished, one update shows the latest state.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.spec import RunSpec
from bot.slack.views import CardView, LaneView, RunView
from bot.store import requests, runs
from bot.store.models import Run, RunRequest


async def load_card(session: AsyncSession, request_id: int) -> tuple[RunRequest, CardView] | None:
    request = await requests.get_request(session, request_id)
    if request is None or request.id is None:
        return None
    view = CardView(
        request_id=request.id,
        spec=RunSpec.model_validate_json(request.spec_json),
        spec_hash=request.spec_hash,
        requester=request.requester,
        state=request.state,
        decided_by=request.decided_by,
        decided_at=request.decided_at,
        reason=request.reason,
    )
    return request, view


async def load_run(session: AsyncSession, run_id: int) -> tuple[Run, RunRequest, RunView] | None:
    run = await runs.get_run(session, run_id)
    if run is None or run.id is None:
        return None
    request = await requests.get_request(session, run.request_id)
    if request is None:
        return None
    lanes = [
        LaneView(
            task_id=lane.task_id,
            pair_index=lane.pair_index,
            role=lane.role,
            status=lane.state,
            reward=lane.reward,
        )
        for lane in await runs.run_lanes(session, run.id)
    ]
    return run, request, RunView(run_id=run.id, run_dir=run.run_dir, state=run.state.value, lanes=lanes)
