"""Lanes: claimed, started, stopped and settled by the engine, each change a guarded UPDATE.

Batches (many lanes claimed or settled in one tick) are one UPDATE whose per-lane values are chosen by
the lane's id, each row still guarded on the state it must be in; RETURNING says which rows moved (a
driver's row count of a statement run with many parameter sets is not to be trusted: asyncpg has none).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, case, func, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.states import RunState
from bot.store.models import Lane, Run


def _update(entity: type[Lane]) -> Any:
    """An UPDATE that leaves loaded objects alone: callers read them after the change, as they were."""
    return update(entity).execution_options(synchronize_session=False)


async def running_lanes_with_run_state(session: AsyncSession) -> list[tuple[Lane, RunState]]:
    """Every running lane with its run's state, in one query (the watcher's view each tick)."""
    rows = await session.execute(
        select(Lane, Run.state)
        .join(Run, Run.id == Lane.run_id)
        .where(Lane.state == LaneStatus.RUNNING)
        .order_by(Lane.id)
    )
    return [(lane, state) for lane, state in rows.all()]


async def running_lanes(session: AsyncSession) -> list[Lane]:
    rows = await session.execute(select(Lane).where(Lane.state == LaneStatus.RUNNING).order_by(Lane.id))
    return list(rows.scalars())


async def count_running(session: AsyncSession, run_id: int | None = None) -> int:
    """Running lanes of one run, or of every run when `run_id` is None (the global slot pool)."""
    query = select(func.count()).where(Lane.state == LaneStatus.RUNNING)
    if run_id is not None:
        query = query.where(Lane.run_id == run_id)
    return int((await session.execute(query)).scalar_one())


@dataclass(frozen=True)
class RunningCounts:
    total: int
    by_run: dict[int, int]
    by_account: dict[str, int]


async def running_counts(session: AsyncSession) -> RunningCounts:
    """Running lanes in total, per run and per account, in one query (the slot pool's bookkeeping)."""
    rows = await session.execute(
        select(Lane.run_id, Lane.account, func.count())
        .where(Lane.state == LaneStatus.RUNNING)
        .group_by(Lane.run_id, Lane.account)
    )
    by_run: dict[int, int] = {}
    by_account: dict[str, int] = {}
    total = 0
    for run_id, account, count in rows.all():
        total += count
        by_run[int(run_id)] = by_run.get(int(run_id), 0) + count
        if account is not None:
            by_account[str(account)] = by_account.get(str(account), 0) + count
    return RunningCounts(total=total, by_run=by_run, by_account=by_account)


async def ready_units(session: AsyncSession, run_id: int, now: datetime, max_lanes: int) -> list[list[Lane]]:
    """The next queued lanes of a run, grouped by pair: both lanes of a task start together.

    A lane waiting out a retry backoff is skipped, so it does not hold up the pairs behind it.
    """
    limit = max_lanes + 2  # a unit is at most a pair; rows past a cut pair are dropped below
    rows = await session.execute(
        select(Lane)
        .where(
            Lane.run_id == run_id,
            Lane.state == LaneStatus.QUEUED,
            or_(Lane.not_before.is_(None), Lane.not_before <= now),
        )
        .order_by(Lane.pair_index, Lane.role)
        .limit(limit)
    )
    lanes = list(rows.scalars())
    units: list[list[Lane]] = []
    for lane in lanes:
        if units and units[-1][0].pair_index == lane.pair_index:
            units[-1].append(lane)
        else:
            units.append([lane])
    if len(lanes) == limit and units:
        units.pop()  # the last pair may be cut by the limit
    return units


async def claim_lane(
    session: AsyncSession, lane_id: int, *, now: datetime, account: str, host: str, marker: str
) -> bool:
    """Queued → running before the process starts, so two pumps never start one lane twice."""
    return await claim_lanes(session, [LaneClaim(lane_id, account, marker)], now=now, host=host) == 1


@dataclass(frozen=True)
class LaneClaim:
    lane_id: int
    account: str
    marker: str


async def claim_lanes(session: AsyncSession, claims: Sequence[LaneClaim], *, now: datetime, host: str) -> int:
    """Queued → running for many lanes in one statement; returns how many moved (the rest were taken)."""
    if not claims:
        return 0
    lanes = Lane.__table__.c  # type: ignore[attr-defined]
    statement = (
        update(Lane.__table__)  # type: ignore[arg-type]
        .where(lanes.id.in_([c.lane_id for c in claims]), lanes.state == LaneStatus.QUEUED)
        .values(
            state=LaneStatus.RUNNING,
            started_at=now,
            finished_at=None,
            attempt=lanes.attempt + 1,
            account=_by_id(lanes, {c.lane_id: c.account for c in claims}, lanes.account),
            host=host,
            marker=_by_id(lanes, {c.lane_id: c.marker for c in claims}, lanes.marker),
            pid=None,
            exit_code=None,
            stop_kind=None,
            stop_sent_at=None,
            killed_at=None,
        )
        .returning(lanes.id)
    )
    return len((await session.execute(statement)).all())


def _by_id(lanes: Any, values: Mapping[int, Any], column: Any) -> Any:
    """`CASE id WHEN … THEN …`: one lane's own value in a statement that updates many."""
    return case(
        *((lanes.id == lane_id, literal(value, column.type)) for lane_id, value in values.items()),
        else_=column,
    )


async def record_pids(session: AsyncSession, pids: Mapping[int, int]) -> None:
    if not pids:
        return
    lanes = Lane.__table__.c  # type: ignore[attr-defined]
    statement = (
        update(Lane.__table__)  # type: ignore[arg-type]
        .where(lanes.id == bindparam("b_id"), lanes.state == LaneStatus.RUNNING)
        .values(pid=bindparam("b_pid"))
    )
    await session.execute(statement, [{"b_id": lane_id, "b_pid": pid} for lane_id, pid in pids.items()])


@dataclass(frozen=True)
class LaneEnd:
    lane_id: int
    outcome: TrialOutcome
    exit_code: int | None


async def finish_lanes(session: AsyncSession, ends: Sequence[LaneEnd], *, now: datetime) -> set[int]:
    """Running → final for many lanes in one statement; returns the ids of the lanes it moved.

    One `UPDATE … WHERE state = 'running' … RETURNING id` (each column a `CASE` on the lane id), so a
    caller that read a lane as running when another had already settled it learns exactly which of
    its endings took effect, and counts nothing twice.
    """
    if not ends:
        return set()
    lanes = Lane.__table__.c  # type: ignore[attr-defined]

    def each(column: Any, value: Callable[[LaneEnd], Any]) -> Any:
        return _by_id(lanes, {end.lane_id: value(end) for end in ends}, column)

    statement = (
        update(Lane.__table__)  # type: ignore[arg-type]
        .where(lanes.id.in_([end.lane_id for end in ends]), lanes.state == LaneStatus.RUNNING)
        .values(
            state=each(lanes.state, lambda end: end.outcome.status),
            reward=each(lanes.reward, lambda end: end.outcome.reward),
            exception_type=each(lanes.exception_type, lambda end: end.outcome.exception_type),
            reason=each(lanes.reason, lambda end: end.outcome.reason),
            exit_code=each(lanes.exit_code, lambda end: end.exit_code),
            finished_at=now,
        )
        .returning(lanes.id)
    )
    return set((await session.execute(statement)).scalars())


async def requeue_lane(
    session: AsyncSession, lane_id: int, *, not_before: datetime | None, reason: str | None, infra: bool
) -> bool:
    """Running → queued again: an infrastructure failure to retry, or a process lost across a restart."""
    result = await session.execute(
        _update(Lane)
        .where(Lane.id == lane_id, Lane.state == LaneStatus.RUNNING)
        .values(
            state=LaneStatus.QUEUED,
            not_before=not_before,
            reason=reason,
            infra_failures=Lane.infra_failures + (1 if infra else 0),
            pid=None,
            marker=None,
            stop_kind=None,
            stop_sent_at=None,
            killed_at=None,
        )
    )
    return result.rowcount == 1


async def note_stop(session: AsyncSession, lane_id: int, kind: str, now: datetime) -> bool:
    """Record that SIGINT went to the lane (once): the grace period runs from here."""
    result = await session.execute(
        _update(Lane)
        .where(Lane.id == lane_id, Lane.state == LaneStatus.RUNNING, Lane.stop_sent_at.is_(None))
        .values(stop_kind=kind, stop_sent_at=now)
    )
    return result.rowcount == 1


async def note_killed(session: AsyncSession, lane_id: int, now: datetime) -> bool:
    result = await session.execute(
        _update(Lane)
        .where(Lane.id == lane_id, Lane.state == LaneStatus.RUNNING, Lane.killed_at.is_(None))
        .values(killed_at=now)
    )
    return result.rowcount == 1


async def cancel_queued_lanes(session: AsyncSession, run_id: int, now: datetime, reason: str) -> int:
    result = await session.execute(
        _update(Lane)
        .where(Lane.run_id == run_id, Lane.state == LaneStatus.QUEUED)
        .values(state=LaneStatus.CANCELLED, reason=reason, finished_at=now)
    )
    return int(result.rowcount)


async def has_unfinished_lanes(session: AsyncSession, run_id: int) -> bool:
    return await _has_lanes_in(session, run_id, (LaneStatus.QUEUED, LaneStatus.RUNNING))


async def has_running_lanes(session: AsyncSession, run_id: int) -> bool:
    return await _has_lanes_in(session, run_id, (LaneStatus.RUNNING,))


async def _has_lanes_in(session: AsyncSession, run_id: int, states: Sequence[LaneStatus]) -> bool:
    rows = await session.execute(
        select(Lane.id).where(Lane.run_id == run_id, Lane.state.in_(list(states))).limit(1)
    )
    return rows.first() is not None
