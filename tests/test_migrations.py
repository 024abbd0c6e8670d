"""Schema migrations: old SQLite files upgraded in place with nothing lost, new databases equal to the
models on SQLite and PostgreSQL, and replicas starting together upgrading one at a time."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from bot.domain.outcome import LaneStatus
from bot.store import approvals, interactions, outbox, requests, runs, schema
from bot.store.db import Store
from bot.store.models import OutboxKind, OutboxState, RequestState, RunState

FIXTURES = Path(__file__).parent / "fixtures" / "databases"
OLD_DATABASES = ["459accd.db", "e9986a2.db"]
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _row_counts(path: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in tables}


def _columns(path: Path, table: str) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _differences(connection: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(connection), SQLModel.metadata))


async def _schema_differences(store: Store) -> list[object]:
    async with store.engine.connect() as connection:
        return await connection.run_sync(_differences)


@pytest.mark.parametrize("name", OLD_DATABASES)
async def test_an_old_database_is_upgraded_in_place_with_every_row_kept(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    before = _row_counts(path)
    store = Store(f"sqlite:///{path}")
    try:
        assert await store.revision() == schema.FIRST
        await store.create_tables()
        assert await store.revision() == schema.head()
        after = _row_counts(path)
        assert {table: after[table] for table in before} == before
        assert "status_ts" not in _columns(path, "runs")  # a column nothing used any more
        assert await _schema_differences(store) == []
        async with store.read() as session:
            approved = await requests.get_request(session, 1)
            run = await runs.get_run(session, 1)
            assert run is not None
            lanes = await runs.run_lanes(session, run.id)
            assert approved is not None and approved.state is RequestState.APPROVED
            assert approved.decided_at == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
            assert await approvals.approvers(session, 1, 2) == ["U2", "U4"]
            assert run.state is RunState.RUNNING
            assert [lane.state for lane in lanes] == [
                LaneStatus.PASSED,
                LaneStatus.RUNNING,
                LaneStatus.QUEUED,
                LaneStatus.CANCELLED,
            ]
            # Lanes that ended before 0005 kept no CSB verdicts: NULL, read by the report as before.
            assert all(lane.verdict_json is None and lane.manifest_status is None for lane in lanes)
            due = await outbox.due(session, NOW)
            assert [(item.kind, item.state) for item in due] == [
                (OutboxKind.STATUS, OutboxState.PENDING),
                (OutboxKind.EPHEMERAL, OutboxState.PENDING),
            ]
            assert await outbox.count_set_aside(session) == 1
        # Today's code writes to it: a new approval, a redraw merged into the pending row, a click.
        async with store.write() as session:
            assert await approvals.add_approval(session, 2, 1, "U9", NOW)
            await outbox.redraw_run(session, 1, NOW)
            assert await interactions.first_sight(session, "U9:approve:1.0", NOW)
        async with store.read() as session:
            assert [item.generation for item in await outbox.due(session, NOW)] == [4, 0]
    finally:
        await store.close()


async def test_a_database_migrated_from_empty_equals_the_models(db_url: str, postgres: object) -> None:
    if db_url.startswith("postgresql"):
        assert postgres is not None
        db_url = postgres.new_database(migrated=False)  # type: ignore[attr-defined]
    store = Store(db_url)
    try:
        assert await store.revision() is None
        await store.create_tables()
        assert await store.revision() == schema.head()
        assert await _schema_differences(store) == []
        await store.create_tables()  # a second start finds nothing to do
        assert await store.revision() == schema.head()
    finally:
        await store.close()


async def test_replicas_starting_together_upgrade_one_at_a_time(db_url: str, postgres: object) -> None:
    if db_url.startswith("postgresql"):
        assert postgres is not None
        db_url = postgres.new_database(migrated=False)  # type: ignore[attr-defined]
    stores = [Store(db_url) for _ in range(4)]
    try:
        await asyncio.gather(*(store.create_tables() for store in stores))
        assert {await store.revision() for store in stores} == {schema.head()}
        assert await _schema_differences(stores[0]) == []
    finally:
        for store in stores:
            await store.close()
