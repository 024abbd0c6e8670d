"""The database: reachable, and at which schema revision (whether `serve` would upgrade it).

Nothing is written: a missing SQLite file is reported, not created."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine.url import make_url

from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.settings import SQLITE_DRIVERS
from bot.store import schema
from bot.store.db import describe_revision, display_url, schema_revision
from bot.store.schema import SchemaKind


@dataclass(frozen=True)
class DatabaseProbe:
    name: str = "database"
    timeout_sec: float = 15.0

    async def run(self, context: ProbeContext) -> list[Line]:
        settings = context.settings
        if settings is None or "CSB_DATABASE_URL" in context.unusable:
            return [note("database not tried: CSB_DATABASE_URL is not usable")]
        url = settings.csb_database_url
        shown = display_url(url)
        parsed = make_url(url)
        if _missing_sqlite_file(parsed.drivername, parsed.database):
            return [note(f"database {shown}: no file yet; serve creates it at revision {schema.head()}")]
        revision = await schema_revision(url, upgrade=False)  # InfraError names it, password masked
        text = f"database {shown}: {describe_revision(revision)}"
        if not revision.startable:
            return [fail(text)]  # serve refuses to start on it
        return [ok(text) if revision.kind is SchemaKind.CURRENT else note(text)]


def _missing_sqlite_file(driver: str, database: str | None) -> bool:
    if driver not in SQLITE_DRIVERS or not database or database == ":memory:":
        return False
    return not Path(database).exists()
