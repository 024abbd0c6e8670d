"""The engine's budget drain keeps the month's sums between ticks: read again when lanes ended here
(`spend_changed`), when the month turns, and at least every `SPEND_RECHECK`; on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, update
from sqlmodel import col

from bot.domain.budget import Budget
from bot.domain.outcome import LaneStatus
from bot.domain.policy import STAGING_DEFAULTS, PolicyConfig
from bot.domain.states import RunState
from bot.engine.budget_drain import SPEND_RECHECK, BudgetDrain
from bot.store import runs
from bot.store.db import Store
from bot.store.models import Lane, RunRequest
from bot.store.records import NewLane, NewRun

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
APRIL = datetime(2026, 4, 1, tzinfo=UTC)
POLICY = PolicyConfig(staging=STAGING_DEFAULTS.model_copy(update={"budget": Budget(monthly_usd=5.0)}))


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """Run 1 (staging) has spent $1 of its $5 budget this month, and has a lane still to start."""
    store = Store(db_url)
    await store.create_tables()
    async with store.write() as session:
        session.add(
            RunRequest(id=1, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=T0)
        )
        await session.flush()
        lanes = [
            NewLane(
                pair_index=i,
                task_id=f"t{i}",
                suite="fix",
                task_path=f"benchmarks/fix/t{i}",
                role="baseline",
                config="base",
                mcp_type="none",
                timeout_sec=600,
                jobs_dir="j",
                log_path="l",
            )
            for i in range(2)
        ]
        await runs.create_run(
            session, NewRun(request_id=1, run_dir="r1", model="m", parallel=1, created_at=T0), lanes
        )
    await _cost(store, 1.0)
    try:
        yield store
    finally:
        await store.close()


async def _cost(store: Store, dollars: float) -> None:
    """Lane 0 ended this month having cost `dollars` (as a settle elsewhere would record it)."""
    async with store.write() as session:
        await session.execute(
            update(Lane)
            .where(col(Lane.run_id) == 1, col(Lane.pair_index) == 0)
            .values(state=LaneStatus.PASSED, started_at=T0, finished_at=T0, cost_usd=dollars)
        )


async def _drain(store: Store, drain: BudgetDrain, now: datetime) -> list[int]:
    async with store.write() as session:
        return await drain.drain_over_budget(session, now)


def _sums_read(store: Store) -> list[str]:
    """Every month's-sum statement the store runs from now on."""
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if "sum(lanes.cost_usd)" in statement:
            seen.append(statement)

    event.listen(store.engine.sync_engine, "before_cursor_execute", count)
    return seen


async def _state(store: Store) -> RunState:
    async with store.read() as session:
        run = await runs.get_run(session, 1)
    assert run is not None
    return run.state


async def test_the_sums_are_read_again_once_lanes_ended_here(store: Store) -> None:
    drain = BudgetDrain(POLICY)
    sums = _sums_read(store)
    now = T0 + timedelta(minutes=1)
    assert await _drain(store, drain, now) == []
    assert await _drain(store, drain, now + timedelta(seconds=1)) == []
    assert len(sums) == 1, "a tick where no lane ended reads no sum again"
    await _cost(store, 9.0)  # past the $5 block line
    drain.spend_changed()  # the engine settled lanes in this tick
    assert await _drain(store, drain, now + timedelta(seconds=2)) == [1]
    assert len(sums) == 2
    assert await _state(store) is RunState.DRAINING


async def test_spend_recorded_elsewhere_is_seen_within_the_recheck(store: Store) -> None:
    drain = BudgetDrain(POLICY)
    now = T0 + timedelta(minutes=1)
    assert await _drain(store, drain, now) == []
    await _cost(store, 9.0)  # not through this engine: nothing says the spend changed
    assert await _drain(store, drain, now + SPEND_RECHECK - timedelta(seconds=1)) == []
    assert await _drain(store, drain, now + SPEND_RECHECK) == [1]


async def test_a_new_month_reads_its_own_sums(store: Store) -> None:
    """March spent $1; lane 1 ends at April's first instant, having cost $9: April is past its line."""
    async with store.write() as session:
        await session.execute(
            update(Lane)
            .where(col(Lane.run_id) == 1, col(Lane.pair_index) == 1)
            .values(state=LaneStatus.PASSED, started_at=T0, finished_at=APRIL, cost_usd=9.0)
        )
    drain = BudgetDrain(POLICY)
    assert await _drain(store, drain, APRIL - timedelta(seconds=0.5)) == []  # March's sums: $1
    assert await _drain(store, drain, APRIL + timedelta(seconds=0.5)) == [1]  # April's: $9, not March's
