"""Runs: created queued at approval (with their lanes), advanced with guarded UPDATEs; the queue order.

Every change here is `UPDATE … WHERE state = expected`: a second engine, a restart mid-change or a
double click finds the row already moved and changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.outcome import LaneStatus
from bot.domain.states import (
    ACTIVE_RUN_STATES,
    STOPPING_RUN_STATES,
    UNDER_WAY_RUN_STATES,
    UNFINISHED_LANE_STATES,
    RunState,
    check_run_move,
)
from bot.store import records
from bot.store.models import Lane, Run, RunRequest
from bot.store.narrow import rowcount

__all__ = [
    "active_runs",
    "attempt_counts",
    "closable_runs",
    "count_attempts",
    "create_run",
    "get_run",
    "lane_counts",
    "link_rerun",
    "mark_run_started",
    "move_run",
    "queue_order",
    "queued_request",
    "request_id_of",
    "run_id_of",
    "run_lanes",
]


def run_id_of(request_id: int) -> int:
    """The rule: a run's id is its request's id. People see one number (`/csb status 7`, request #7 and
    run #7 alike), and a run's card, thread and channel are its request's. `create_run` makes it so;
    code that holds one id and needs the other calls this (or `request_id_of`), naming the rule."""
    return request_id


def request_id_of(run_id: int) -> int:
    """The request of run `run_id`, by the rule of `run_id_of`."""
    return run_id


async def create_run(
    session: AsyncSession, new: records.NewRun, lanes: Sequence[records.NewLane]
) -> records.Run:
    """The run, queued, with its lanes; its id is its request's (`run_id_of`)."""
    run_id = run_id_of(new.request_id)
    run = Run(id=run_id, **_columns(new))
    session.add(run)
    await session.flush()
    session.add_all(Lane(run_id=run_id, model=new.model, **_columns(lane)) for lane in lanes)
    await session.flush()
    return records.Run.from_row(run)


def _columns(new: records.NewRun | records.NewLane) -> dict[str, Any]:
    return {field.name: getattr(new, field.name) for field in fields(new)}


async def get_run(session: AsyncSession, run_id: int) -> records.Run | None:
    run = await session.get(Run, run_id)
    return None if run is None else records.Run.from_row(run)


@dataclass(frozen=True)
class AttemptCounts:
    """A run's state and the lane attempts counted since it started or resumed: the pause rule's input."""

    state: RunState
    attempts: int
    infra_failures: int


async def attempt_counts(session: AsyncSession, run_id: int) -> AttemptCounts | None:
    """Read from the table, never from a run loaded earlier in the transaction: `count_attempts` has just
    added to them."""
    rows = await session.execute(
        select(col(Run.state), col(Run.attempts_done), col(Run.infra_failures)).where(col(Run.id) == run_id)
    )
    row = rows.one_or_none()
    return None if row is None else AttemptCounts(state=row[0], attempts=row[1], infra_failures=row[2])


async def run_lanes(session: AsyncSession, run_id: int) -> list[records.Lane]:
    rows = await session.execute(
        select(Lane).where(col(Lane.run_id) == run_id).order_by(col(Lane.pair_index), col(Lane.role))
    )
    return [records.Lane.from_row(lane) for lane in rows.scalars()]


async def lane_counts(session: AsyncSession, run_ids: Sequence[int]) -> dict[int, records.LaneCounts]:
    """Each run's lanes counted by the database, by suite and state, in one statement: a run has hundreds
    of lanes, and `/csb status` shows only their numbers and suites."""
    counts: dict[int, dict[tuple[str, LaneStatus], int]] = {run_id: {} for run_id in run_ids}
    if run_ids:
        rows = await session.execute(
            select(col(Lane.run_id), col(Lane.suite), col(Lane.state), func.count())
            .where(col(Lane.run_id).in_(list(run_ids)))
            .group_by(col(Lane.run_id), col(Lane.suite), col(Lane.state))
        )
        for run_id, suite, state, n in rows.all():
            counts[run_id][(suite, LaneStatus(state))] = int(n)
    return {
        run_id: records.LaneCounts(
            lanes=sum(by.values()),
            done=sum(n for (_, state), n in by.items() if state.is_final),
            running=sum(n for (_, state), n in by.items() if state is LaneStatus.RUNNING),
            suites=tuple(sorted({suite for suite, _ in by})),
        )
        for run_id, by in counts.items()
    }


def _update(entity: type[Lane] | type[Run]) -> Any:
    """An UPDATE that leaves loaded objects alone: callers read them after the change, as they were."""
    return update(entity).execution_options(synchronize_session=False)


def queue_order() -> tuple[Any, ...]:
    """`official` before `staging`, then first come (approved) first served."""
    priority = case((col(RunRequest.category) == "official", 0), else_=1)
    return (priority, col(Run.created_at), col(Run.id))


async def active_runs(
    session: AsyncSession, states: Collection[RunState] = ACTIVE_RUN_STATES
) -> list[records.Run]:
    """Runs in `states`, in queue order."""
    rows = await session.execute(
        select(Run)
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(col(Run.state).in_(list(states)))
        .order_by(*queue_order())
    )
    return [records.Run.from_row(run) for run in rows.scalars()]


async def queued_request(session: AsyncSession, run_id: int) -> tuple[records.Run, records.RunRequest] | None:
    """The run, if it has not started yet, with the request it was approved from."""
    rows = await session.execute(
        select(Run, RunRequest)
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(col(Run.id) == run_id, col(Run.state) == RunState.QUEUED)
    )
    row = rows.first()
    return None if row is None else (records.Run.from_row(row[0]), records.RunRequest.from_row(row[1]))


async def closable_runs(session: AsyncSession) -> list[records.Run]:
    """Runs with nothing left to do: no lane queued or running (stopping runs: none running)."""

    def lanes_in(*states: LaneStatus) -> Any:
        return (
            select(col(Lane.id)).where(col(Lane.run_id) == col(Run.id), col(Lane.state).in_(states)).exists()
        )

    rows = await session.execute(
        select(Run).where(
            or_(
                col(Run.state).in_(UNDER_WAY_RUN_STATES) & ~lanes_in(*UNFINISHED_LANE_STATES),
                col(Run.state).in_(STOPPING_RUN_STATES) & ~lanes_in(LaneStatus.RUNNING),
            )
        )
    )
    return [records.Run.from_row(run) for run in rows.scalars()]


async def move_run(
    session: AsyncSession, run_id: int, *, from_states: Collection[RunState], to: RunState, **values: Any
) -> bool:
    """The one guarded transition of a run's state; False when it was not in `from_states`.

    A move the state machine does not allow (`bot/domain/states.py`) is a bug: ValueError."""
    check_run_move(from_states, to)
    result = await session.execute(
        _update(Run)
        .where(col(Run.id) == run_id, col(Run.state).in_(list(from_states)))
        .values(state=to, **values)
    )
    return rowcount(result) == 1


async def mark_run_started(session: AsyncSession, run_id: int, now: datetime) -> bool:
    return await move_run(session, run_id, from_states=[RunState.QUEUED], to=RunState.RUNNING, started_at=now)


async def count_attempts(session: AsyncSession, run_id: int, *, attempts: int, infra: int) -> None:
    """Lane attempts that ended (and how many failed on infrastructure): the pause rule reads these."""
    await session.execute(
        _update(Run)
        .where(col(Run.id) == run_id)
        .values(
            attempts_done=col(Run.attempts_done) + attempts,
            infra_failures=col(Run.infra_failures) + infra,
            infra_failures_total=col(Run.infra_failures_total) + infra,
        )
    )


async def link_rerun(session: AsyncSession, request_id: int, run_id: int) -> bool:
    """Mark a request as the rerun of `run_id` (once)."""
    result = await session.execute(
        update(RunRequest)
        .where(col(RunRequest.id) == request_id, col(RunRequest.rerun_of).is_(None))
        .values(rerun_of=run_id)
    )
    return rowcount(result) == 1
