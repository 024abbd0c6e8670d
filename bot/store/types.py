"""Column types shared by the tables."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from sqlalchemy import DateTime, Enum
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out. PostgreSQL keeps them as `timestamp with time zone`;
    SQLite, which has no zones, keeps the UTC wall time and the zone is put back on reading."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        utc = value.astimezone(UTC)
        return utc if dialect.name == "postgresql" else utc.replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def enum_type(enum: type[StrEnum]) -> Enum:
    """A state column: the member's value (`pending`) in a VARCHAR, the same on every database. No
    native enum type on PostgreSQL, so a new state needs no ALTER TYPE."""
    return Enum(
        enum,
        native_enum=False,
        create_constraint=False,
        values_callable=lambda members: [member.value for member in members],
    )
