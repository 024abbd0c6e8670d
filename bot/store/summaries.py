"""Closed runs' summaries: written in the transaction that closes a run, read by `/csb runs` and App Home.

A finished or cancelled run is final (`bot/domain/states.py` allows it no move) and every write to a
lane is guarded on a state a closed run's lanes have left (queued or running), so what its lanes add up
to when it closes is what they add up to for good. Reading that one row, the answers cost the same with
a year of history behind them as on the first day. Runs still under way are few and are summed from
their lanes by the indexed `run_id` (`pair_states`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import case, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute, defer
from sqlmodel import col

from bot.domain.outcome import LaneStatus
from bot.domain.run_summary import RunFigures, run_figures, valid_lanes
from bot.domain.spec import RunSpec
from bot.domain.states import FINAL_RUN_STATES, RunState
from bot.store import lane_keys, records, requests, runs
from bot.store.models import Lane, RunSummary
from bot.store.narrow import table_of
from bot.store.upsert import insert

__all__ = [
    "LANE_COLUMNS",
    "SummedRow",
    "finished",
    "finished_folders",
    "kept_lanes",
    "latest",
    "of_requester",
    "pair_states",
    "record",
    "summary_row",
    "summed_lanes",
    "valid_keys",
    "valid_lane_counts",
]


@dataclass(frozen=True, slots=True)
class SummedRow:
    """The lane columns a run's figures are summed from, and only those (a run has hundreds of lanes)."""

    pair_index: int
    task_id: str
    suite: str
    role: str
    config: str
    state: LaneStatus
    reward: float | None
    cost_usd: float | None
    input_tokens: int | None
    output_tokens: int | None
    verdict_json: str | None


_RUNS_AT_ONCE = 500  # runs per statement: under either database's limit on bound values
LANE_COLUMNS = tuple(field.name for field in fields(SummedRow))
_COLUMNS = tuple(table_of(Lane).c[name] for name in LANE_COLUMNS)


async def record(session: AsyncSession, run_id: int) -> None:
    """Sum the closed run's lanes into its summary, in the caller's transaction (the one closing it, so
    the two are never seen apart). Writing it again changes nothing: the first one stands."""
    run = await runs.get_run(session, run_id)
    if run is None or run.state not in FINAL_RUN_STATES:
        raise ValueError(f"run #{run_id} is not closed: only a closed run is summed for good")
    request = await requests.get_request(session, run.request_id)
    if request is None:
        raise ValueError(f"run #{run_id} has no request")
    lanes = await summed_lanes(session, run_id)
    row = summary_row(run_id, run.state, run.finished_at, request, request.spec, run_figures(lanes))
    valid = valid_lanes(lanes)
    row |= _kept(run.run_dir, valid) | {"valid_keys": await valid_keys(session, valid)}
    await session.execute(insert(session, RunSummary).values(**row).on_conflict_do_nothing())


async def summed_lanes(session: AsyncSession, run_id: int) -> list[SummedRow]:
    """A run's lanes, only the columns its figures and results are made of, by pair and role."""
    rows = await session.execute(
        select(*_COLUMNS).where(col(Lane.run_id) == run_id).order_by(col(Lane.pair_index), col(Lane.role))
    )
    return [SummedRow(*row) for row in rows.all()]


def summary_row(
    run_id: int,
    state: RunState,
    finished_at: datetime | None,
    request: Any,
    spec: RunSpec,
    figures: RunFigures,
) -> dict[str, Any]:
    """The summary's columns; `request` has the request's `requester`, `channel_id` and `category`."""
    return {
        "run_id": run_id,
        "state": state,
        "finished_at": finished_at,
        "requester": request.requester,
        "channel_id": request.channel_id,
        "category": request.category,
        "model": spec.params.model,
        "suite_label": spec.suite_label,
        "suite": spec.params.suite,
        "suites_json": json.dumps(list(spec.suites)),
        "pairs_done": figures.pairs_done,
        "pairs_total": figures.pairs_total,
        "baseline_passed": figures.baseline.passed,
        "baseline_valid": figures.baseline.valid,
        "baseline_mean_reward": figures.baseline.mean_reward,
        "mcp_passed": figures.mcp.passed,
        "mcp_valid": figures.mcp.valid,
        "mcp_mean_reward": figures.mcp.mean_reward,
        "baseline_lanes": figures.baseline_lanes.lanes,
        "baseline_lanes_passed": figures.baseline_lanes.passed,
        "mcp_lanes": figures.mcp_lanes.lanes,
        "mcp_lanes_passed": figures.mcp_lanes.passed,
        "outcomes_json": json.dumps({state.value: n for state, n in figures.outcomes}),
        "cost_usd": figures.cost_usd,
        "input_tokens": figures.input_tokens,
        "output_tokens": figures.output_tokens,
    }


def kept_lanes(run_dir: str, lanes: Sequence[SummedRow]) -> dict[str, Any]:
    """The columns `/csb coverage --staging` reads: the run's folder and its valid lanes (as JSON; migration
    0010 writes these, 0012 the numbers)."""
    return _kept(run_dir, valid_lanes(lanes))


def _kept(run_dir: str, valid: Sequence[lane_keys.Key]) -> dict[str, Any]:
    return {"run_dir": run_dir, "valid_json": json.dumps([list(lane) for lane in valid])}


async def valid_keys(session: AsyncSession, lanes: Sequence[lane_keys.Key]) -> bytes:
    """The valid lanes as `lane_keys` numbers, packed: what coverage counts without decoding."""
    numbers = await lane_keys.intern(session, lanes)
    return lane_keys.pack([numbers[lane] for lane in lanes])


def _summaries() -> Any:
    """The summaries without the valid lanes, which only coverage reads (`valid_lanes`)."""
    return select(RunSummary).options(defer(cast("QueryableAttribute[Any]", RunSummary.valid_json)))


async def finished(session: AsyncSession, limit: int) -> list[records.RunSummary]:
    """At most `limit` finished runs, the newest finish first."""
    rows = await session.execute(
        _summaries()
        .where(col(RunSummary.state) == RunState.FINISHED)
        .order_by(col(RunSummary.finished_at).desc(), col(RunSummary.run_id).desc())
        .limit(limit)
    )
    return [records.RunSummary.from_row(row) for row in rows.scalars()]


async def latest(session: AsyncSession, category: str, limit: int) -> list[records.RunSummary]:
    """At most `limit` finished runs of a category, the newest finish first."""
    rows = await session.execute(
        _summaries()
        .where(col(RunSummary.category) == category, col(RunSummary.state) == RunState.FINISHED)
        .order_by(col(RunSummary.finished_at).desc(), col(RunSummary.run_id).desc())
        .limit(limit)
    )
    return [records.RunSummary.from_row(row) for row in rows.scalars()]


async def of_requester(session: AsyncSession, user_id: str, limit: int) -> list[records.RunSummary]:
    """Someone's closed runs, the newest first."""
    rows = await session.execute(
        _summaries()
        .where(col(RunSummary.requester) == user_id)
        .order_by(col(RunSummary.run_id).desc())
        .limit(limit)
    )
    return [records.RunSummary.from_row(row) for row in rows.scalars()]


async def finished_folders(session: AsyncSession, limit: int) -> list[records.FinishedFolder]:
    """At most `limit` finished runs, the newest finish first, as coverage chooses among them."""
    rows = await session.execute(
        select(
            col(RunSummary.run_id),
            col(RunSummary.category),
            col(RunSummary.requester),
            col(RunSummary.channel_id),
            col(RunSummary.model),
            col(RunSummary.suites_json),
            col(RunSummary.run_dir),
        )
        .where(col(RunSummary.state) == RunState.FINISHED)
        .order_by(col(RunSummary.finished_at).desc(), col(RunSummary.run_id).desc())
        .limit(limit)
    )
    return [
        records.FinishedFolder(run_id, category, requester, channel, model, tuple(json.loads(suites)), folder)
        for run_id, category, requester, channel, model, suites, folder in rows.all()
    ]


async def valid_lane_counts(session: AsyncSession, run_ids: Sequence[int]) -> Counter[lane_keys.Key]:
    """How many of these closed runs' lanes CSB's rules keep as valid runs, per (suite, config, MANIFEST
    task key): their packed numbers added up at once; a summary an older csb-bot wrote has its lanes as
    JSON alone, and is decoded."""
    numbers: list[bytes] = []
    older: Counter[lane_keys.Key] = Counter()
    json_if_older = case((col(RunSummary.valid_keys).is_(None), col(RunSummary.valid_json)), else_=None)
    for first in range(0, len(run_ids), _RUNS_AT_ONCE):
        rows = await session.execute(
            select(col(RunSummary.valid_keys), json_if_older).where(
                col(RunSummary.run_id).in_(list(run_ids[first : first + _RUNS_AT_ONCE]))
            )
        )
        for packed, valid in rows.all():
            if packed is not None:
                numbers.append(packed)
            else:
                older.update(cast("list[lane_keys.Key]", list(map(tuple, json.loads(valid)))))
    counted = lane_keys.count(numbers)
    keys = await lane_keys.keys_of(session, counted.keys())
    return Counter({keys[number]: n for number, n in counted.items()}) + older


PairStates = dict[int, list[tuple[int, LaneStatus]]]


async def pair_states(session: AsyncSession, run_ids: Sequence[int]) -> PairStates:
    """Runs still under way: each lane's (pair index, state), by run, read by the indexed `run_id`."""
    found: PairStates = {run_id: [] for run_id in run_ids}
    if run_ids:
        rows = await session.execute(
            select(col(Lane.run_id), col(Lane.pair_index), col(Lane.state)).where(
                col(Lane.run_id).in_(list(run_ids))
            )
        )
        for run_id, pair, state in rows.all():
            found[run_id].append((pair, state))
    return found
