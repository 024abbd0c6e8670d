"""Queue position and ETA of a run, for the status card: read-only figures from the lanes table.

The ETA is a rough forecast: the work ahead (queued lanes of runs ahead in the queue, half of every
running lane) spread over the slot pool, at the mean duration of recently finished comparable lanes:
of the same suites, else of the same model. Until there are any, the ETA is unknown (None), since
lanes of another suite or model can take ten times as long.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, func, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.outcome import LaneStatus
from bot.domain.states import COMPLETED_LANE_STATES, STARTABLE_RUN_STATES, UNFINISHED_LANE_STATES, RunState
from bot.store import lease, records, runs
from bot.store.models import Lane

DURATION_SAMPLE = 200  # recent finished lanes the mean duration is taken over
DEFAULT_SLOTS = 4  # until an engine has published its slot pool in the lease row
_MEASURED = COMPLETED_LANE_STATES


@dataclass(frozen=True)
class QueueFigures:
    position: int | None  # 1 = the next run to start; None once the run has started (or ended)
    start_eta_sec: float | None  # until its first lanes start; 0 once started; None without history
    finish_eta_sec: float | None  # until its last lane ends; None without history or once ended

    @property
    def eta_sec(self) -> float | None:
        """The ETA a card and `/csb status` show: until the run starts while it waits in the queue, else
        until its last lane ends."""
        return self.start_eta_sec if self.position is not None else self.finish_eta_sec


async def queue_position(session: AsyncSession, run_id: int) -> int | None:
    """Place among runs not started yet, `official` first, then by approval time."""
    waiting = await runs.active_runs(session, states=[RunState.QUEUED])
    ids = [run.id for run in waiting]
    return ids.index(run_id) + 1 if run_id in ids else None


async def mean_lane_seconds(session: AsyncSession, run: records.Run) -> float | None:
    """Mean duration of recent finished lanes comparable to `run`'s: of its suites, else of its model."""
    suites = (await _suites_of(session, [run.id]))[run.id]
    return await _comparable_mean(session, suites, run.model)


async def _suites_of(session: AsyncSession, run_ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """Each run's suites, sorted."""
    found: dict[int, set[str]] = {run_id: set() for run_id in run_ids}
    rows = await session.execute(
        select(col(Lane.run_id), col(Lane.suite)).where(col(Lane.run_id).in_(list(run_ids))).distinct()
    )
    for run_id, suite in rows.all():
        found[run_id].add(suite)
    return {run_id: tuple(sorted(suites)) for run_id, suites in found.items()}


async def _comparable_mean(session: AsyncSession, suites: tuple[str, ...], model: str) -> float | None:
    same_suite = await _mean_seconds_of_suites(session, list(suites))
    if same_suite is not None:
        return same_suite
    # Each lane keeps its run's model, so this walks `ix_lanes_model_finished` from its newest end.
    same_model = col(Lane.model) == model
    return _mean((await session.execute(_newest_durations(same_model))).all())


async def _mean_seconds_of_suites(session: AsyncSession, suites: list[str]) -> float | None:
    """The newest `DURATION_SAMPLE` lanes of any of `suites`: each suite's newest from the end of its part
    of `ix_lanes_suite_finished`, merged here. One `suite IN (…)` ordered by `finished_at` would read every
    lane of those suites and sort them (SQLite's plan), which grows with the history."""
    if not suites:
        return None
    parts = [_newest_durations(col(Lane.suite) == suite).subquery() for suite in suites]
    merged = union_all(*(select(part.c.started_at, part.c.finished_at) for part in parts))
    rows = sorted((await session.execute(merged)).all(), key=lambda row: row[1], reverse=True)
    return _mean(rows[:DURATION_SAMPLE])


def _newest_durations(*where: ColumnElement[bool]) -> Select[datetime | None, datetime | None]:
    return (
        select(col(Lane.started_at), col(Lane.finished_at))
        .where(
            col(Lane.state).in_(list(_MEASURED)),
            col(Lane.started_at).is_not(None),
            col(Lane.finished_at).is_not(None),
            *where,
        )
        .order_by(col(Lane.finished_at).desc())
        .limit(DURATION_SAMPLE)
    )


def _mean(rows: Sequence[Any]) -> float | None:
    durations = [(end - start).total_seconds() for start, end in rows if None not in (start, end)]
    return sum(durations) / len(durations) if durations else None


async def queue_figures(session: AsyncSession, run_id: int) -> QueueFigures:
    run = await runs.get_run(session, run_id)
    if run is None:
        return _NO_FIGURES
    return (await queue_figures_of(session, [run]))[run.id]


async def queue_figures_of(session: AsyncSession, of_runs: Sequence[records.Run]) -> dict[int, QueueFigures]:
    """Each run's figures, with what they share read once (the queue, the lanes not ended, the slot pool,
    the suites' mean duration), so `/csb status` over every active run costs a few statements."""
    found = {run.id: _NO_FIGURES for run in of_runs}
    live = [run for run in of_runs if not run.state.is_final]
    if not live:
        return found
    waiting = [run.id for run in await runs.active_runs(session, states=[RunState.QUEUED])]
    suites = await _suites_of(session, [run.id for run in live])
    means: dict[tuple[tuple[str, ...], str], float | None] = {}
    shared: _Shared | None = None
    for run in live:
        position = waiting.index(run.id) + 1 if run.id in waiting else None
        key = (suites[run.id], run.model)
        if key not in means:
            means[key] = await _comparable_mean(session, *key)
        mean = means[key]
        if mean is None:
            found[run.id] = QueueFigures(position=position, start_eta_sec=None, finish_eta_sec=None)
            continue
        shared = shared or await _shared(session)
        ahead = _work_ahead(shared, run)
        own = shared.queued.get(run.id, 0) + 0.5 * shared.running.get(run.id, 0)
        start = ahead * mean / shared.pool if position is not None else 0.0
        finish = start + own * mean / max(1, min(shared.pool, run.parallel))
        found[run.id] = QueueFigures(position=position, start_eta_sec=start, finish_eta_sec=finish)
    return found


_NO_FIGURES = QueueFigures(position=None, start_eta_sec=None, finish_eta_sec=None)


@dataclass(frozen=True)
class _Shared:
    """What every run's ETA reads alike: the slot pool, lanes queued and running by run, the start order."""

    pool: int
    queued: dict[int, int]
    running: dict[int, int]
    startable: tuple[int, ...]


async def _shared(session: AsyncSession) -> _Shared:
    pool = await _published_slots(session)
    queued, running = await _lane_counts(session)
    startable = await runs.active_runs(session, states=STARTABLE_RUN_STATES)
    return _Shared(pool, queued, running, tuple(run.id for run in startable))


def _work_ahead(shared: _Shared, run: records.Run) -> float:
    """Lane-equivalents that take slots before this run's first lane: runs ahead, and all running lanes."""
    work = 0.5 * sum(shared.running.values())
    for other in shared.startable:
        if other == run.id:
            break
        work += shared.queued.get(other, 0)
    return work


async def _lane_counts(session: AsyncSession) -> tuple[dict[int, int], dict[int, int]]:
    rows = await session.execute(
        select(col(Lane.run_id), col(Lane.state), func.count())
        .where(col(Lane.state).in_(list(UNFINISHED_LANE_STATES)))
        .group_by(col(Lane.run_id), col(Lane.state))
    )
    queued: dict[int, int] = {}
    running: dict[int, int] = {}
    for run_id, state, count in rows.all():
        (queued if state == LaneStatus.QUEUED else running)[int(run_id)] = int(count)
    return queued, running


async def published_slots(session: AsyncSession) -> int | None:
    """The slot pool the engine holding the lease works with; None before any engine has run."""
    held = await lease.get_lease(session)
    return held.slots if held is not None and held.slots > 0 else None


async def _published_slots(session: AsyncSession) -> int:
    return await published_slots(session) or DEFAULT_SLOTS
