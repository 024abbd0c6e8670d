"""How large the database is, table by table (`csb-bot db stats`): history grows with every run, and
an operator needs to see where it goes before deciding what to keep.

Sizes count a table with its indexes. SQLite measures them with its `dbstat` table when the library was
built with it, else only the whole file is known (its page count); PostgreSQL with
`pg_total_relation_size` (heap, indexes and TOAST).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import SQLModel

from bot.domain.errors import InfraError
from bot.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)
from bot.store.db import Store, describe_revision, display_url
from bot.store.schema import SchemaKind

__all__ = ["DatabaseSize", "TableSize", "measure", "measure_url"]


@dataclass(frozen=True)
class TableSize:
    name: str
    rows: int
    bytes: int | None  # None: this SQLite cannot measure one table (no `dbstat`)


@dataclass(frozen=True)
class DatabaseSize:
    tables: list[TableSize]
    total_bytes: int
    how: str  # which measure the sizes come from, for the reader

    def as_json(self) -> dict[str, object]:
        return {
            "tables": [asdict(table) for table in self.tables],
            "total_bytes": self.total_bytes,
            "how": self.how,
        }


async def measure_url(url: str) -> DatabaseSize:
    """`csb-bot db stats`: measured only on a schema this bot knows (its tables are the ones counted)."""
    store = Store(url)
    try:
        found = await store.schema_state()
        if found.kind not in (SchemaKind.CURRENT, SchemaKind.OLDER, SchemaKind.NEWER):
            raise InfraError(f"{display_url(url)}: {describe_revision(found)}")
        try:
            return await measure(store)
        except (SQLAlchemyError, OSError) as exc:
            cause = getattr(exc, "orig", None) or exc
            first_line = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
            raise InfraError(f"{display_url(url)}: could not measure the tables: {first_line}") from exc
    finally:
        await store.close()


async def measure(store: Store) -> DatabaseSize:
    """Row count and bytes of each of the bot's tables, and of the whole database."""
    async with store.engine.connect() as conn:
        present = set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
        rows = {}
        for table in SQLModel.metadata.sorted_tables:
            if table.name not in present:  # an older schema, before the migration that adds it
                continue
            counted = await conn.execute(select(func.count()).select_from(table))
            rows[table.name] = int(counted.scalar_one())
        measured = (
            await _postgres_sizes(conn, list(rows))
            if conn.dialect.name == "postgresql"
            else await _sqlite_sizes(conn)
        )
    sizes, total, how = measured
    tables = [
        TableSize(name, count, sizes.get(name) if sizes is not None else None) for name, count in rows.items()
    ]
    return DatabaseSize(sorted(tables, key=lambda t: t.name), total, how)


async def _postgres_sizes(conn: AsyncConnection, names: list[str]) -> tuple[dict[str, int] | None, int, str]:
    sizes = {}
    for name in names:
        found = await conn.execute(
            text("SELECT pg_total_relation_size(CAST(:name AS regclass))"), {"name": name}
        )
        sizes[name] = int(found.scalar_one())
    total = await conn.execute(text("SELECT pg_database_size(current_database())"))
    return sizes, int(total.scalar_one()), "pg_total_relation_size (heap, indexes, TOAST)"


async def _sqlite_sizes(conn: AsyncConnection) -> tuple[dict[str, int] | None, int, str]:
    pages = (await conn.execute(text("PRAGMA page_count"))).scalar_one()
    page_size = (await conn.execute(text("PRAGMA page_size"))).scalar_one()
    total = int(pages) * int(page_size)
    try:
        found = await conn.execute(
            text(
                "SELECT m.tbl_name, SUM(s.pgsize) FROM dbstat AS s "
                "JOIN sqlite_master AS m ON m.name = s.name GROUP BY m.tbl_name"
            )
        )
    except OperationalError:  # built without SQLITE_ENABLE_DBSTAT_VTAB
        return None, total, "page_count x page_size (this SQLite has no dbstat: no size per table)"
    return {name: int(size) for name, size in found.all()}, total, "dbstat (table and its indexes)"
