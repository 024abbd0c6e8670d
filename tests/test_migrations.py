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
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel
from waiting import until

from bot.domain.outcome import LaneStatus
from bot.domain.reason import ReasonKind
from bot.store import approvals, interactions, outbox, runs, schema
from bot.store.db import Store
from bot.store.models import OutboxKind, OutboxState, RequestState, RunRequest, RunState

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


def test_the_revisions_named_by_file_are_alembics_own() -> None:
    """`serve` on a database at head reads the revision ids from the migrations' file names, without
    Alembic; they must be what Alembic reads from the scripts, in the order they apply."""
    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    scripts = ScriptDirectory.from_config(config)
    in_order = [script.revision for script in reversed(list(scripts.walk_revisions()))]
    assert list(schema._shipped()) == in_order
    assert schema.head() == scripts.get_current_head() == in_order[-1]


def test_a_migration_file_not_named_after_its_revision_is_caught(tmp_path: Path) -> None:
    """The check above fails when a script's name and its revision id disagree (a planted copy)."""
    versions = tmp_path / "migrations" / "versions"
    shutil.copytree(
        schema.VERSIONS.parent, tmp_path / "migrations", ignore=shutil.ignore_patterns("__pycache__")
    )
    last = sorted(versions.glob("0*.py"))[-1]
    last.rename(versions / f"9{last.name[1:]}")
    config = Config()
    config.set_main_option("script_location", str(tmp_path / "migrations"))
    by_alembic = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    assert set(schema.revisions_in(versions)) != by_alembic


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
            # The table's row, not the store's record: the fixtures' specs are stand-ins (`{"tasks": […]}`)
            # that no `RunSpec` parses, and the record parses its spec.
            approved = await session.get(RunRequest, 1)
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


async def test_a_database_migrated_from_empty_equals_the_models(empty_db_url: str) -> None:
    db_url = empty_db_url
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


async def test_replicas_starting_together_upgrade_one_at_a_time(empty_db_url: str) -> None:
    db_url = empty_db_url
    stores = [Store(db_url) for _ in range(4)]
    try:
        await asyncio.gather(*(store.create_tables() for store in stores))
        assert {await store.revision() for store in stores} == {schema.head()}
        assert await _schema_differences(stores[0]) == []
    finally:
        for store in stores:
            await store.close()


# Reasons as 0005 stored them, joined into one string, and the fields 0006 makes of them.
JOINED_REASONS = {
    "harbor exited 1 without a trial result; log: Error: 429 Too Many Requests": (
        "harbor exited 1 without a trial result",
        "no_result",
        "Error: 429 Too Many Requests",
    ),
    "Agent exited with code 1; log: API Error: 529 overloaded": (
        "Agent exited with code 1",
        "exception",
        "API Error: 529 overloaded",
    ),
    "log: rate limit reached": (None, "exception", "rate limit reached"),
    "no trial result after 1h00m (limit 1h00m)": (
        "no trial result after 1h00m (limit 1h00m)",
        "no_result_in_time",
        None,
    ),
    "Ray failed job j before its lane ran; no trial result": (
        "Ray failed job j before its lane ran; no trial result",
        "executor",
        None,
    ),
    "retry 1/3 after: harbor exited 1 without a trial result": (
        "retry 1/3 after: harbor exited 1 without a trial result",
        "no_result",
        None,
    ),
}


def _filler(column: sa.Column[object]) -> object:
    """A value for a required column the test does not care about, by its type."""
    kind = column.type.python_type
    return {int: 1, str: "x", bool: False, float: 0.0, datetime: NOW}[kind]


def _insert_required(connection: Connection, table: sa.Table, **values: object) -> None:
    required = {
        column.name: _filler(column)
        for column in table.columns
        if not column.nullable and column.server_default is None and column.name not in values
    }
    connection.execute(table.insert().values(**required, **values))


def _at_0005_with_joined_reasons(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    config.attributes["connection"] = connection
    command.upgrade(config, "0005")
    tables = sa.MetaData()
    tables.reflect(connection)
    _insert_required(connection, tables.tables["run_requests"], id=1)
    _insert_required(connection, tables.tables["runs"], id=1, request_id=1)
    for lane_id, reason in enumerate(JOINED_REASONS, start=1):
        exception_type = "NonZeroAgentExitCodeError" if reason.startswith(("Agent", "log:")) else None
        _insert_required(
            connection,
            tables.tables["lanes"],
            id=lane_id,
            run_id=1,
            task_id=f"t{lane_id}",
            state="errored",
            reason=reason,
            exception_type=exception_type,
        )


async def test_joined_lane_reasons_are_carried_over_into_fields(empty_db_url: str) -> None:
    """0006 cuts a reason stored as `<message>; log: <line>` into its fields and tells its kind."""
    db_url = empty_db_url
    store = Store(db_url)
    try:
        async with store.engine.begin() as connection:
            await connection.run_sync(_at_0005_with_joined_reasons)
        assert await store.revision() == "0005"
        await store.create_tables()
        assert await store.revision() == schema.head()
        async with store.read() as session:
            lanes = await runs.run_lanes(session, 1)
        carried = {lane.id: (lane.reason, lane.reason_kind, lane.log_line) for lane in lanes}
        assert carried == dict(enumerate(JOINED_REASONS.values(), start=1))
        assert all(reason_kind in set(ReasonKind) for _, reason_kind, _ in carried.values())
    finally:
        await store.close()


# -- 0011: an index built while the bot writes ----------------------------------------------------------

ONLINE_INDEX = "ix_lanes_model_finished"


def _at_0009_with_lanes(connection: Connection) -> None:
    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    config.attributes["connection"] = connection
    command.upgrade(config, "0009")
    tables = sa.MetaData()
    tables.reflect(connection)
    _insert_required(connection, tables.tables["run_requests"], id=1)
    _insert_required(connection, tables.tables["runs"], id=1, request_id=1)
    for lane_id in (1, 2):
        _insert_required(connection, tables.tables["lanes"], id=lane_id, run_id=1, task_id=f"t{lane_id}")


async def _index_state(store: Store) -> list[tuple[str, bool]]:
    """The online index's name and whether it is valid (SQLite's are always), as the database lists it."""
    async with store.engine.connect() as connection:
        if store.engine.dialect.name == "sqlite":
            found = await connection.exec_driver_sql(
                f"SELECT name, 1 FROM sqlite_master WHERE type = 'index' AND name = '{ONLINE_INDEX}'"
            )
        else:
            found = await connection.exec_driver_sql(
                "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                f"WHERE c.relname = '{ONLINE_INDEX}'"
            )
        return [(str(name), bool(valid)) for name, valid in found.all()]


async def test_0011_adds_its_index_to_a_database_with_lanes(empty_db_url: str) -> None:
    db_url = empty_db_url
    store = Store(db_url)
    try:
        async with store.engine.begin() as connection:
            await connection.run_sync(_at_0009_with_lanes)
        assert await _index_state(store) == []
        await store.create_tables()
        assert await store.revision() == schema.head()
        assert await _index_state(store) == [(ONLINE_INDEX, True)]
        assert await _schema_differences(store) == []
    finally:
        await store.close()


async def _building(store: Store) -> bool:
    """Whether a CREATE INDEX on lanes is waiting for a lock (here: for the open writer to end)."""
    async with store.engine.connect() as connection:
        found = await connection.exec_driver_sql(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE query ILIKE 'CREATE INDEX%' AND wait_event_type = 'Lock'"
        )
        return int(found.scalar_one()) > 0


async def test_writes_to_lanes_go_on_while_0011_builds_its_index(postgres: object) -> None:
    """A writer's transaction open on `lanes` when the upgrade starts keeps the build waiting; meanwhile
    another lane is written within a deadline, and a second replica starting then waits for the first and
    finds nothing to do. A plain CREATE INDEX would queue behind the open writer and every write after it
    behind itself: the write would miss its deadline."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database(migrated=False)  # type: ignore[attr-defined]
    store, replica, bot = Store(url), Store(url), Store(url)
    try:
        async with store.engine.begin() as connection:
            await connection.run_sync(_at_0009_with_lanes)
        async with bot.engine.connect() as open_writer:
            await open_writer.exec_driver_sql("UPDATE lanes SET reason = 'open' WHERE id = 1")
            upgrading = asyncio.create_task(store.create_tables())
            await until(lambda: _building(store), "the index build to wait for the open writer")
            second = asyncio.create_task(replica.create_tables())
            async with asyncio.timeout(5):  # the bot's write, while the index builds
                async with bot.write() as session:
                    await session.execute(sa.text("UPDATE lanes SET reason = 'written' WHERE id = 2"))
            assert not upgrading.done() and await _building(store)
            await open_writer.rollback()
        await asyncio.gather(upgrading, second)
        assert {await store.revision(), await replica.revision()} == {schema.head()}
        assert await _index_state(store) == [(ONLINE_INDEX, True)]
    finally:
        for each in (store, replica, bot):
            await each.close()


async def test_an_index_left_invalid_by_a_stopped_build_is_built_again(postgres: object) -> None:
    """A concurrent build cancelled part way (a bot killed while it built) leaves an invalid index of the
    name; the next upgrade drops it and builds it again, instead of taking it for done."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database(migrated=False)  # type: ignore[attr-defined]
    store, other = Store(url), Store(url)
    try:
        async with store.engine.begin() as connection:
            await connection.run_sync(_at_0009_with_lanes)
        async with other.engine.connect() as open_writer, other.engine.connect() as builder:
            await open_writer.exec_driver_sql("UPDATE lanes SET reason = 'open' WHERE id = 1")
            await builder.execution_options(isolation_level="AUTOCOMMIT")
            pid = (await builder.exec_driver_sql("SELECT pg_backend_pid()")).scalar_one()
            build = asyncio.create_task(
                builder.exec_driver_sql(f"CREATE INDEX CONCURRENTLY {ONLINE_INDEX} ON lanes (model)")
            )
            await until(lambda: _building(store), "the stand-in build to wait for the open writer")
            async with store.engine.connect() as connection:
                await connection.exec_driver_sql(f"SELECT pg_cancel_backend({int(pid)})")
            with pytest.raises(sa.exc.DBAPIError):
                await build
            await open_writer.rollback()
        assert await _index_state(store) == [(ONLINE_INDEX, False)]
        await store.create_tables()
        assert await _index_state(store) == [(ONLINE_INDEX, True)]
        assert await _schema_differences(store) == []  # the columns of 0011's index, not the stand-in's
    finally:
        await store.close()
        await other.close()
