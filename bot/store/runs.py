"""Runs and their lanes: created queued at approval, advanced by the engine with guarded UPDATEs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.store.models import Lane, Run, RunState


async def create_run(session: AsyncSession, run: Run, lanes: Sequence[Lane]) -> Run:
    session.add(run)
    await session.flush()
    for lane in lanes:
        lane.run_id = run.id  # type: ignore[assignment]
        session.add(lane)
    await session.flush()
    return run


async def get_run(session: AsyncSession, run_id: int) -> Run | None:
    return await session.get(Run, run_id)


async def run_lanes(session: AsyncSession, run_id: int) -> list[Lane]:
    rows = await session.execute(
        select(Lane).where(Lane.run_id == run_id).order_by(Lane.pair_index, Lane.role)
    )
    return list(rows.scalars())


async def active_runs(session: AsyncSession) -> list[Run]:
    """Runs that still have work, oldest first: first come, first served."""
    rows = await session.execute(
        select(Run).where(Run.state.in_([RunState.QUEUED, RunState.RUNNING])).order_by(Run.id)
    )
    return list(rows.scalars())


async def running_lanes(session: AsyncSession) -> list[Lane]:
    rows = await session.execute(select(Lane).where(Lane.state == LaneStatus.RUNNING).order_by(Lane.id))
    return list(rows.scalars())


async def count_running(session: AsyncSession, run_id: int) -> int:
    rows = await session.execute(
        select(func.count()).where(Lane.run_id == run_id, Lane.state == LaneStatus.RUNNING)
    )
    return int(rows.scalar_one())


async def next_queued_pair(session: AsyncSession, run_id: int) -> list[Lane]:
    """The lanes of the lowest pair index that is still fully queued (both lanes start together)."""
    first = await session.execute(
        select(func.min(Lane.pair_index)).where(Lane.run_id == run_id, Lane.state == LaneStatus.QUEUED)
    )
    pair_index = first.scalar_one_or_none()
    if pair_index is None:
        return []
    rows = await session.execute(
        select(Lane)
        .where(Lane.run_id == run_id, Lane.pair_index == pair_index, Lane.state == LaneStatus.QUEUED)
        .order_by(Lane.role)
    )
    return list(rows.scalars())


async def mark_run_started(session: AsyncSession, run_id: int, now: datetime) -> bool:
    result = await session.execute(
        update(Run)
        .where(Run.id == run_id, Run.state == RunState.QUEUED)
        .values(state=RunState.RUNNING, started_at=now)
    )
    return result.rowcount == 1


async def mark_run_finished(session: AsyncSession, run_id: int, now: datetime) -> bool:
    result = await session.execute(
        update(Run)
        .where(Run.id == run_id, Run.state == RunState.RUNNING)
        .values(state=RunState.FINISHED, finished_at=now)
    )
    return result.rowcount == 1


async def claim_lane(session: AsyncSession, lane_id: int, now: datetime) -> bool:
    """Queued → running before the process starts, so two pumps never start one lane twice."""
    result = await session.execute(
        update(Lane)
        .where(Lane.id == lane_id, Lane.state == LaneStatus.QUEUED)
        .values(state=LaneStatus.RUNNING, started_at=now)
    )
    return result.rowcount == 1


async def record_pid(session: AsyncSession, lane_id: int, pid: int) -> None:
    await session.execute(update(Lane).where(Lane.id == lane_id).values(pid=pid))


async def finish_lane(
    session: AsyncSession, lane_id: int, outcome: TrialOutcome, *, exit_code: int | None, now: datetime
) -> bool:
    """Running → its final status, once; a second watcher seeing the same exit changes nothing."""
    result = await session.execute(
        update(Lane)
        .where(Lane.id == lane_id, Lane.state == LaneStatus.RUNNING)
        .values(
            state=outcome.status,
            reward=outcome.reward,
            exception_type=outcome.exception_type,
            reason=outcome.reason,
            exit_code=exit_code,
            finished_at=now,
        )
    )
    return result.rowcount == 1


async def set_status_ts(session: AsyncSession, run_id: int, ts: str) -> None:
    await session.execute(update(Run).where(Run.id == run_id).values(status_ts=ts))


async def has_unfinished_lanes(session: AsyncSession, run_id: int) -> bool:
    rows = await session.execute(
        select(Lane.id)
        .where(Lane.run_id == run_id, Lane.state.in_([LaneStatus.QUEUED, LaneStatus.RUNNING]))
        .limit(1)
    )
    return rows.first() is not None
