"""The estimate's history and a month's spend as the store reads them, on SQLite and PostgreSQL: the same
model first, then the suite, then none; the newest lanes only; durations worked out by the database;
lanes dropped before they ran are not spend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, select, update
from sqlmodel import col
from test_migrations import _insert_required

from bot.domain.budget import month_bounds
from bot.domain.estimate import Basis, LaneSample
from bot.domain.outcome import LaneStatus
from bot.store import estimates, runs, schema, spend
from bot.store.db import Store
from bot.store.models import Lane, RunRequest
from bot.store.records import NewLane, NewRun

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def _run(
    store: Store, number: int, model: str, lanes: list[tuple[str, str, LaneStatus, float | None]]
) -> None:
    """Run `number` of `model` whose lanes (suite, config, state, cost) ended one minute apart, each having
    run 60 s × its position."""
    async with store.write() as session:
        session.add(
            RunRequest(
                id=number, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=T0
            )
        )
        await session.flush()
        new = [
            NewLane(
                pair_index=i,
                task_id=f"t{i}",
                suite=suite,
                task_path=f"benchmarks/{suite}/t{i}",
                role="baseline",
                config=config,
                mcp_type="none",
                timeout_sec=600,
                jobs_dir="j",
                log_path="l",
            )
            for i, (suite, config, _, _) in enumerate(lanes)
        ]
        run = NewRun(request_id=number, run_dir=f"r{number}", model=model, parallel=1, created_at=T0)
        await runs.create_run(session, run, new)  # each lane keeps the run's model
        for i, (_, _, state, cost) in enumerate(lanes):
            ended = T0 + timedelta(minutes=number * 10 + i)
            await session.execute(
                update(Lane)
                .where(col(Lane.run_id) == number, col(Lane.pair_index) == i)
                .values(
                    state=state,
                    started_at=ended - timedelta(seconds=60 * (i + 1)),
                    finished_at=ended,
                    cost_usd=cost,
                )
            )


async def test_history_prefers_the_model_then_the_suite_and_keeps_the_newest(db_url: str) -> None:
    store = Store(db_url)
    try:
        await store.create_tables()
        passed, failed = LaneStatus.PASSED, LaneStatus.FAILED
        await _run(
            store,
            1,
            "m1",
            [("fix", "base", passed, 1.0), ("fix", "base", failed, 2.0), ("fix", "mcp", passed, 5.0)],
        )
        await _run(store, 2, "m2", [("fix", "base", passed, 9.0), ("debug", "base", passed, 7.0)])
        await _run(
            store, 3, "m1", [("fix", "base", LaneStatus.CANCELLED, None), ("fix", "base", passed, 3.0)]
        )
        groups = [("fix", "base"), ("fix", "mcp"), ("debug", "base"), ("debug", "mcp"), ("docs", "base")]
        async with store.read() as session:
            found = await estimates.lane_history(session, "m1", groups, limit=2)
        # The newest two finished lanes of m1 on fix/base: run 3's (the cancelled one never ran), then
        # run 1's second; each ran 60 s × (its position + 1).
        assert found[("fix", "base")].basis is Basis.EXACT
        assert list(found[("fix", "base")].samples) == [LaneSample(3.0, 120.0), LaneSample(2.0, 120.0)]
        assert list(found[("fix", "mcp")].samples) == [LaneSample(5.0, 180.0)]
        assert found[("debug", "base")].basis is Basis.SUITE  # m2's lane of the suite
        assert list(found[("debug", "base")].samples) == [LaneSample(7.0, 120.0)]
        assert found[("debug", "mcp")].basis is Basis.SUITE
        assert found[("docs", "base")].basis is Basis.NONE and not found[("docs", "base")].samples

        start, end = month_bounds("2026-03")
        async with store.read() as session:
            assert await spend.month_spent(session, start, end, category="staging") == 27.0
            assert await spend.month_spent(session, start, end, category="staging", model="m1") == 11.0
            assert await spend.month_spent(session, start, end, category="official") == 0.0
            rows = await spend.spend_rows(session, start, end)
            april = await spend.spend_rows(session, *month_bounds("2026-04"))
        # 6 lanes ran (the cancelled one is not counted): 1 + 2 + 5 + 9 + 7 + 3 dollars
        assert sum(row.lanes for row in rows) == 6 and sum(row.cost_usd for row in rows) == 27.0
        assert april == []
    finally:
        await store.close()


def _at_0007_with_two_runs(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    config.attributes["connection"] = connection
    command.upgrade(config, "0007")
    tables = sa.MetaData()
    tables.reflect(connection)
    for run, model in ((1, "m1"), (2, "m2")):
        _insert_required(connection, tables.tables["run_requests"], id=run)
        _insert_required(connection, tables.tables["runs"], id=run, request_id=run, model=model)
        for lane in range(2):
            _insert_required(
                connection,
                tables.tables["lanes"],
                id=run * 10 + lane,
                run_id=run,
                task_id=f"t{lane}",
                role=f"r{lane}",
            )


async def test_0008_gives_the_lanes_there_are_their_run_s_model(empty_db_url: str) -> None:
    db_url = empty_db_url
    store = Store(db_url)
    try:
        async with store.engine.begin() as connection:
            await connection.run_sync(_at_0007_with_two_runs)
        await store.create_tables()
        assert await store.revision() == schema.head()
        async with store.read() as session:
            found = (
                await session.execute(select(col(Lane.id), col(Lane.model)).order_by(col(Lane.id)))
            ).all()
        assert [tuple(row) for row in found] == [(10, "m1"), (11, "m1"), (20, "m2"), (21, "m2")]
    finally:
        await store.close()
