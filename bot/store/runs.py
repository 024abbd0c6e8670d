"""Runs: created queued at approval (with their lanes), advanced with guarded UPDATEs; the queue order.

Every change here is `UPDATE … WHERE state = expected`: a second engine, a restart mid-change or a
double click finds the row already moved and changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import case, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.outcome import LaneStatus
from bot.domain.states import (
    ACTIVE_RUN_STATES,
    STOPPING_RUN_STATES,
    UNDER_WAY_RUN_STATES,
    RunState,
    check_run_move,
)
from bot.store.models import Lane, Run, RunRequest

__all__ = [
    "active_runs",
    "closable_runs",
    "count_attempts",
    "create_run",
    "get_run",
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


async def create_run(session: AsyncSession, run: Run, lanes: Sequence[Lane]) -> Run:
    """The run with its lanes; its id is its request's (`run_id_of`), given or not."""
    if run.id is None:
        run.id = run_id_of(run.request_id)
    if run.id != run_id_of(run.request_id):
        raise ValueError(f"run {run.id} of request {run.request_id}: a run's id is its request's")
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


def _update(entity: type[Lane] | type[Run]) -> Any:
    """An UPDATE that leaves loaded objects alone: callers read them after the change, as they were."""
    return update(entity).execution_options(synchronize_session=False)


def queue_order() -> tuple[Any, ...]:
    """`official` before `staging`, then first come (approved) first served."""
    priority = case((RunRequest.category == "official", 0), else_=1)
    return (priority, Run.created_at, Run.id)


async def active_runs(session: AsyncSession, states: Collection[RunState] = ACTIVE_RUN_STATES) -> list[Run]:
    """Runs in `states`, in queue order."""
    rows = await session.execute(
        select(Run)
        .join(RunRequest, RunRequest.id == Run.request_id)
        .where(Run.state.in_(list(states)))
        .order_by(*queue_order())
    )
    return list(rows.scalars())


async def queued_request(session: AsyncSession, run_id: int) -> tuple[Run, RunRequest] | None:
    """The run, if it has not started yet, with the request it was approved from."""
    rows = await session.execute(
        select(Run, RunRequest)
        .join(RunRequest, RunRequest.id == Run.request_id)
        .where(Run.id == run_id, Run.state == RunState.QUEUED)
    )
    row = rows.first()
    return None if row is None else (row[0], row[1])


async def closable_runs(session: AsyncSession) -> list[Run]:
    """Runs with nothing left to do: no lane queued or running (stopping runs: none running)."""

    def lanes_in(*states: LaneStatus) -> Any:
        return select(Lane.id).where(Lane.run_id == Run.id, Lane.state.in_(states)).exists()

    rows = await session.execute(
        select(Run).where(
            or_(
                Run.state.in_(UNDER_WAY_RUN_STATES) & ~lanes_in(LaneStatus.QUEUED, LaneStatus.RUNNING),
                Run.state.in_(STOPPING_RUN_STATES) & ~lanes_in(LaneStatus.RUNNING),
            )
        )
    )
    return list(rows.scalars())


async def move_run(
    session: AsyncSession, run_id: int, *, from_states: Collection[RunState], to: RunState, **values: Any
) -> bool:
    """The one guarded transition of a run's state; False when it was not in `from_states`.

    A move the state machine does not allow (`bot/domain/states.py`) is a bug: ValueError."""
    check_run_move(from_states, to)
    result = await session.execute(
        _update(Run).where(Run.id == run_id, Run.state.in_(list(from_states))).values(state=to, **values)
    )
    return result.rowcount == 1


async def mark_run_started(session: AsyncSession, run_id: int, now: datetime) -> bool:
    return await move_run(session, run_id, from_states=[RunState.QUEUED], to=RunState.RUNNING, started_at=now)


async def count_attempts(session: AsyncSession, run_id: int, *, attempts: int, infra: int) -> None:
    """Lane attempts that ended (and how many failed on infrastructure): the pause rule reads these."""
    await session.execute(
        _update(Run)
        .where(Run.id == run_id)
        .values(
            attempts_done=Run.attempts_done + attempts,
            infra_failures=Run.infra_failures + infra,
            infra_failures_total=Run.infra_failures_total + infra,
        )
    )


async def link_rerun(session: AsyncSession, request_id: int, run_id: int) -> bool:
    """Mark a request as the rerun of `run_id` (once)."""
    result = await session.execute(
        update(RunRequest)
        .where(RunRequest.id == request_id, RunRequest.rerun_of.is_(None))
        .values(rerun_of=run_id)
    )
    return result.rowcount == 1
