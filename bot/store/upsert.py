"""`INSERT … ON CONFLICT` for the database in use: writers in several processes meet on a unique key
instead of each reading "not there yet" and one failing on the insert."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession


def insert(session: AsyncSession, table: Any) -> Any:
    """An INSERT into `table` (a model class) that offers `on_conflict_do_nothing / do_update`."""
    dialect = session.get_bind().dialect.name
    return (pg_insert if dialect == "postgresql" else sqlite_insert)(table)
