"""Engine and session setup. SQLite runs in WAL mode with a busy timeout; writes take the lock up front."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, inspect
from sqlalchemy.engine import Connection
from sqlalchemy.engine.url import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine
from sqlmodel import SQLModel

from bot.domain.errors import InfraError
from bot.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)

_WRITE = "csb_write"


def async_url(url: str) -> str:
    """Accept `sqlite:///x` as well as `sqlite+aiosqlite:///x`: the bot always talks to the database async."""
    parsed = make_url(url)
    if parsed.drivername == "sqlite":
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    return parsed.render_as_string(hide_password=False)


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _install_sqlite_pragmas(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so `_on_begin` decides how each one starts.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A write transaction takes the write lock at BEGIN, so two writers queue on busy_timeout
        # instead of one failing with "database is locked" when it upgrades from a read.
        immediate = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _missing_columns(conn: Connection) -> dict[str, list[str]]:
    """Columns this version's models have and the existing tables lack, per table."""
    inspector = inspect(conn)
    lacking: dict[str, list[str]] = {}
    for table in SQLModel.metadata.sorted_tables:
        present = {column["name"] for column in inspector.get_columns(table.name)}
        missing = [column.name for column in table.columns if column.name not in present]
        if missing:
            lacking[table.name] = missing
    return lacking


class Store:
    """Owns the engine: `write()` for state changes (one committed transaction), `read()` for reads."""

    def __init__(self, url: str) -> None:
        self.url = async_url(url)
        path = _sqlite_path(self.url)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_async_engine(self.url)
        self._is_sqlite = self.engine.dialect.name == "sqlite"
        if self._is_sqlite:
            _install_sqlite_pragmas(self.engine)
        self._write_engine = self.engine.execution_options(**{_WRITE: True})

    async def create_tables(self) -> None:
        """Create what is missing; refuse a database made by an older version rather than fail mid-run."""
        async with self._write_engine.begin() as conn:
            await conn.run_sync(SQLModel.metadata.create_all)
            lacking = await conn.run_sync(_missing_columns)
        if lacking:
            tables = "; ".join(f"table {name} lacks {', '.join(cols)}" for name, cols in lacking.items())
            raise InfraError(
                f"the database {make_url(self.url).render_as_string(hide_password=True)} was made by an "
                f"older csb-bot ({tables}). There are no migrations yet: keep that file for its history "
                "and point CSB_DATABASE_URL at a new one."
            )

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
