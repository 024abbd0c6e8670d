"""Engine and session setup. SQLite runs in WAL mode with a busy timeout; writes take the lock up front."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlalchemy.pool import NullPool

from bot.domain.errors import InfraError
from bot.store import (
    migration_lock,
    models,  # noqa: F401  (registers the tables on SQLModel.metadata)
    schema,
)
from bot.store.availability import DATABASE_ERRORS, unavailable

log = logging.getLogger(__name__)

_WRITE = "csb_write"
PING_TIMEOUT_SEC = 2.0
# The longest one statement may take on PostgreSQL (see `_pool_options`); the bot's own take milliseconds.
COMMAND_TIMEOUT_SEC = 10.0
MIGRATION_TIMEOUT_SEC = 3600.0  # a migration's statements: building an index on a year of lanes
LOCK_TIMEOUT_SHARE = 0.8  # of that deadline, the longest wait for a lock (SQLite's busy timeout is 10 s)
# PostgreSQL ends a session left idle inside a transaction this long (`?idle_in_transaction_timeout=N` in
# the URL, seconds, sets another; 0 turns it off). The bot never waits on anything but its own statements
# and a few milliseconds of Python inside a transaction, so only a frozen process (SIGSTOP, a suspended
# VM, a debugger) or a stalled event loop leaves one idle; a frozen one would otherwise keep its row
# locks, the lease row among them, until it ran again, and no replica could take the timers.
IDLE_IN_TRANSACTION_SEC = 60.0
IDLE_OPTION = "idle_in_transaction_timeout"  # the bot's own query key: never handed to the driver


_ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def async_url(url: str) -> str:
    """Accept `sqlite:///x` and `postgresql://…` as well as their async drivers' names: the bot always
    talks to the database async (aiosqlite, asyncpg)."""
    parsed = make_url(url)
    parsed = parsed.set(drivername=_ASYNC_DRIVERS.get(parsed.drivername, parsed.drivername))
    return parsed.render_as_string(hide_password=False)


def display_url(url: str) -> str:
    """The URL as a log line or an error may show it: the password masked."""
    return make_url(url).render_as_string(hide_password=True)


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


WAL_ATTEMPTS = 50


def enter_wal(cursor: Any) -> None:
    """Put the database in WAL mode (it stays so), even when other connections to a new file do the same.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers a connection that would deadlock
    on it "database is locked" at once, busy timeout or not. That is no failure when the other connection
    made the same switch: read the mode (the read waits out the switch on the busy timeout) and try again
    only when it is not WAL yet."""
    for _ in range(WAL_ATTEMPTS):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
        cursor.execute("PRAGMA journal_mode")
        if str(cursor.fetchone()[0]).lower() == "wal":
            return
    raise sqlite3.OperationalError(f"database is locked: WAL mode not entered in {WAL_ATTEMPTS} attempts")


def _install_sqlite_pragmas(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so `_on_begin` decides how each one starts.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout=10000")
        enter_wal(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A write transaction takes the write lock at BEGIN, so two writers queue on busy_timeout
        # instead of one failing with "database is locked" when it upgrades from a read.
        immediate = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _pool_options(url: str) -> dict[str, Any]:
    """PostgreSQL: a bounded pool whose connections are tested before use, so a database that restarted
    costs one failed ping, not a failed request; a connect that hangs gives up in 2 s, inside Slack's 3.

    Every statement (the ping too) has a deadline, `COMMAND_TIMEOUT_SEC` unless the URL names its own
    `command_timeout`: a server that stops answering on open connections (a network cut, a frozen host)
    would otherwise hold each of them for good, and with them the whole pool. At the deadline the
    statement fails as "unavailable" and its connection is thrown away, so the pool mends itself.

    The other way round, a bot process frozen inside a transaction has its session ended by the server
    after `IDLE_IN_TRANSACTION_SEC` (`idle_in_transaction_session_timeout`), its locks with it. When it
    runs again its next statement fails (the connection is closed), the transaction is rolled back, and
    the pool, which knows that connection is gone, opens a fresh one for the next checkout.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return {}
    deadline = _seconds(parsed.query.get("command_timeout"), COMMAND_TIMEOUT_SEC)
    # A lock held by other work is given up before the deadline, as PostgreSQL's "lock timeout" (busy),
    # not taken for a server that stopped answering (unavailable).
    lock_ms = int(LOCK_TIMEOUT_SHARE * deadline * 1000)
    idle_ms = int(max(_seconds(parsed.query.get(IDLE_OPTION), IDLE_IN_TRANSACTION_SEC), 0) * 1000)
    server_settings = {"lock_timeout": str(lock_ms), "idle_in_transaction_session_timeout": str(idle_ms)}
    connect_args: dict[str, Any] = {"timeout": 2, "server_settings": server_settings}
    if "command_timeout" not in parsed.query:  # the URL's own, when given, reaches asyncpg as it is
        connect_args["command_timeout"] = deadline
    return {
        "pool_size": 5,
        "max_overflow": 10,
        "pool_timeout": 10,
        "pool_pre_ping": True,
        "pool_recycle": 1800,
        "connect_args": connect_args,
    }


def _driver_url(url: str) -> str:
    """The URL without the bot's own query keys, which the driver would refuse."""
    parsed = make_url(url)
    if IDLE_OPTION not in parsed.query:
        return url
    return parsed.difference_update_query([IDLE_OPTION]).render_as_string(hide_password=False)


def _migration_args(url: str) -> dict[str, Any]:
    """The pool's connection settings, with the migrations' longer statement deadline."""
    args: dict[str, Any] = dict(_pool_options(url)["connect_args"])
    return args | {"command_timeout": MIGRATION_TIMEOUT_SEC}


def _seconds(given: object, default: float) -> float:
    try:
        return float(given) if isinstance(given, str) else default
    except ValueError:
        return default


class Store:
    """Owns the engine: `write()` for state changes (one committed transaction), `read()` for reads."""

    def __init__(self, url: str) -> None:
        self.url = async_url(url)
        path = _sqlite_path(self.url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_async_engine(_driver_url(self.url), **_pool_options(self.url))
        self._is_sqlite = self.engine.dialect.name == "sqlite"
        if self._is_sqlite:
            _install_sqlite_pragmas(self.engine)
        self._write_engine = self.engine.execution_options(**{_WRITE: True})

    async def create_tables(self) -> None:
        """Create the tables, or bring an existing database's up to date, by the migrations."""
        try:
            if self._is_sqlite:
                # BEGIN IMMEDIATE: the write lock is the migration lock, and the upgrade one transaction.
                async with self._write_engine.begin() as conn:
                    await conn.run_sync(schema.upgrade)
            else:
                await self._upgrade_postgres()
        except schema.SchemaProblem as exc:
            raise InfraError(f"{display_url(self.url)}: {exc}") from None
        except (SQLAlchemyError, schema.MigrationFailed, OSError) as exc:
            raise self._failed("could not bring the schema up to date", exc) from exc
        log.info("database %s at schema revision %s", display_url(self.url), await self.revision())

    async def _upgrade_postgres(self) -> None:
        """On a connection of its own, under the session-level migration lock (`migration_lock.py`),
        with no transaction around the upgrade: Alembic opens and commits its own, so that a revision
        may build an index concurrently outside one. The statement deadline of the bot's pool is
        `MIGRATION_TIMEOUT_SEC` here: an index over a year of lanes may take minutes."""
        engine = create_async_engine(
            _driver_url(self.url), poolclass=NullPool, connect_args=_migration_args(self.url)
        )
        try:
            async with engine.connect() as conn, migration_lock.held(conn, schema.MIGRATION_LOCK):
                await conn.run_sync(schema.upgrade)
        finally:
            await engine.dispose()

    async def revision(self) -> str | None:
        """The schema revision the database is at (None: empty, or a version table no migration wrote)."""
        return (await self.schema_state()).revision

    async def schema_state(self) -> schema.SchemaState:
        """The schema against this version's revisions: current, older, newer, or one no migration wrote."""
        try:
            async with self.engine.connect() as conn:
                return await conn.run_sync(schema.state)
        except (SQLAlchemyError, OSError) as exc:
            raise self._failed("could not read the schema revision", exc) from exc

    def _failed(self, what: str, exc: BaseException) -> InfraError:
        """One line naming the database with its password masked, and the driver's first line."""
        cause = getattr(exc, "orig", None) or exc
        first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        return InfraError(f"{display_url(self.url)}: {what}: {first_line}")

    async def reachable(self, timeout: float = PING_TIMEOUT_SEC) -> bool:
        """Whether the database answers now (for /healthz): False while it is away or too slow."""
        try:
            async with asyncio.timeout(timeout), self.engine.connect() as conn:
                await conn.exec_driver_sql("SELECT 1")
        except TimeoutError:
            return False
        except DATABASE_ERRORS as exc:
            if unavailable(exc):
                return False
            raise
        return True

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        async with AsyncSession(self._write_engine, expire_on_commit=False) as session, session.begin():
            yield session

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with AsyncSession(self.engine, expire_on_commit=False) as session:
            yield session

    async def close(self) -> None:
        await self.engine.dispose()


async def schema_revision(url: str, *, upgrade: bool) -> schema.SchemaState:
    """The database's schema, after bringing it up to date when `upgrade` and it can be (`csb-bot db`)."""
    store = Store(url)
    try:
        if upgrade and (await store.schema_state()).startable:
            await store.create_tables()
        return await store.schema_state()
    finally:
        await store.close()


def describe_revision(found: schema.SchemaState) -> str:
    """One line for an operator: where the schema is against what this version of the bot ships."""
    head = schema.head()
    kind = schema.SchemaKind
    if found.kind is kind.EMPTY:
        return f"no schema yet (this csb-bot creates revision {head} at start or with `csb-bot db upgrade`)"
    if found.kind is kind.CURRENT:
        return f"schema revision {found.revision}, up to date"
    if found.kind is kind.OLDER:
        upgrades = f"this csb-bot upgrades it to {head} (at start, or `db upgrade`)"
        return f"schema revision {found.revision}; {upgrades}"
    if found.kind is kind.NEWER:
        return (
            f"schema revision {found.revision}, newer than this csb-bot's {head}: it runs on it unchanged "
            "(migrations only add); upgrade this csb-bot"
        )
    return f"cannot start on this database: {schema.refusal(found)}"
