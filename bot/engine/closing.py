"""Close runs with nothing left to do: finished when every lane ended, cancelled when a stop is done.

Each close is a guarded transition, so the final report is queued exactly once.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import outbox_keys
from bot.domain.states import STOPPING_RUN_STATES, RunState
from bot.store import audit, lanes, outbox, runs, summaries
from bot.store.records import OutboxKind, Run


async def close_runs(session: AsyncSession, now: datetime) -> list[int]:
    """Close every run with nothing left to do, in the caller's transaction; returns their ids."""
    closed: list[int] = []
    for run in await runs.closable_runs(session):
        if await close_run(session, run, now):
            closed.append(run.id)
    return closed


async def close_run(session: AsyncSession, run: Run, now: datetime) -> int:
    if run.state in STOPPING_RUN_STATES:
        if await lanes.has_running_lanes(session, run.id):
            return 0
        await lanes.cancel_queued_lanes(session, run.id, now, reason=f"not started: the run was {run.state}")
        to, action = RunState.CANCELLED, "drained" if run.state is RunState.DRAINING else "cancelled"
    else:
        if await lanes.has_unfinished_lanes(session, run.id):
            return 0
        to, action = RunState.FINISHED, "finished"
    if not await runs.move_run(session, run.id, from_states=[run.state], to=to, finished_at=now):
        return 0
    await summaries.record(session, run.id)  # in the closing transaction: never one without the other
    await announce_close(session, run, action, now)
    return 1


async def announce_close(session: AsyncSession, run: Run, action: str, now: datetime) -> None:
    """Audit the close and queue the final status and report."""
    await audit.record_run(session, run, action, now)
    await outbox.redraw_run(session, run.id, now)
    await outbox.enqueue(
        session, kind=OutboxKind.SUMMARY, target=outbox_keys.summary(run.id), now=now, run_id=run.id
    )
