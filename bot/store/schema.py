"""Schema upgrades by the Alembic migrations in bot/store/migrations, one process at a time.

`csb-bot serve` runs them at start and `csb-bot db upgrade` on demand, under the migration lock, so
replicas started in the same second upgrade in turn and the later ones find nothing left to do. On
SQLite the lock is the write lock, taken at BEGIN IMMEDIATE by the caller, and the upgrade is that one
transaction. On PostgreSQL it is a session-level advisory lock the caller holds (`migration_lock.py`)
and the connection comes without a transaction: Alembic runs the revisions in one of its own, which a
revision that builds an index concurrently commits part way (`online_index.py`).

A rolling deploy upgrades the schema while replicas of the older version still run, and may restart one
of them: an older replica therefore starts on a newer schema, without touching it (migrations only add
columns and tables, so what it reads and writes is still there). It knows a revision is newer, not
unknown, by its number: the revisions are numbered `0001`, `0002`, … in the order they apply. A version
table the bot cannot read as one known or newer revision (emptied while tables remain, two rows, a
name that is not a number) was not written by a migration, so no replica starts on it and `db current`
says what it holds.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect
from sqlalchemy.engine import Connection

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

# The revision whose schema a database made before migrations existed already has (see its docstring).
FIRST = "0001"
# The migration lock's key on PostgreSQL: any constant the bot's other locks do not use ("csbm" in ASCII).
MIGRATION_LOCK = 0x6373_626D


VERSIONS = Path(__file__).parent / "migrations" / "versions"
_NUMBERED = re.compile(r"\d{4}")
_REVISION_FILE = re.compile(r"(\d{4})_\w+\.py")


def _config(connection: Connection | None = None) -> Config:
    # Alembic loads here, on the path that migrates, not at every start: importing it costs a start a
    # third of a second of CPU (it brings Mako, and Mako brings Pygments), and a database already at
    # head needs only the revision ids, which the migrations' file names give (`_shipped`).
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    config.attributes["connection"] = connection
    return config


def revisions_in(folder: Path) -> tuple[str, ...]:
    """The revisions of a versions folder, in order: each migration's file is named `NNNN_what.py` after
    its revision id (tests/test_migrations.py holds Alembic's own reading of the scripts to it)."""
    found = (_REVISION_FILE.fullmatch(path.name) for path in folder.iterdir())
    return tuple(sorted(match.group(1) for match in found if match))


@cache
def _shipped() -> tuple[str, ...]:
    return revisions_in(VERSIONS)


def head() -> str:
    """The newest revision this version of the bot ships."""
    shipped = _shipped()
    assert shipped, "the package ships its migrations"
    return shipped[-1]


class SchemaKind(StrEnum):
    EMPTY = "empty"  # no tables yet
    CURRENT = "current"  # at this version's head
    OLDER = "older"  # a revision this version upgrades from
    NEWER = "newer"  # numbered above this version's head: a later version upgraded it
    UNKNOWN = "unknown"  # a revision that is neither this version's nor numbered like one
    EMPTIED = "emptied"  # tables, but the version table holds no row
    SEVERAL = "several"  # the version table holds more than one row


@dataclass(frozen=True)
class SchemaState:
    """What the version table says, read row by row, so no content of it can raise."""

    kind: SchemaKind
    revisions: tuple[str, ...] = ()

    @property
    def revision(self) -> str | None:
        return self.revisions[0] if len(self.revisions) == 1 else None

    @property
    def startable(self) -> bool:
        """Whether a replica of this version may start on it (an upgrade first, unless it is newer)."""
        return self.kind not in (SchemaKind.UNKNOWN, SchemaKind.EMPTIED, SchemaKind.SEVERAL)


class SchemaProblem(ValueError):
    """The version table holds what no migration wrote; the message says what, in one line."""


def state(connection: Connection) -> SchemaState:
    """The database's schema against this version's revisions (see the module's docstring)."""
    inspector = inspect(connection)
    if not inspector.has_table("alembic_version"):
        has_tables = inspector.has_table("run_requests")
        return SchemaState(SchemaKind.OLDER, (FIRST,)) if has_tables else SchemaState(SchemaKind.EMPTY)
    rows = connection.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    revisions = tuple(sorted(str(row[0]) for row in rows))
    if len(revisions) > 1:
        return SchemaState(SchemaKind.SEVERAL, revisions)
    if not revisions:
        emptied = inspector.has_table("run_requests")
        return SchemaState(SchemaKind.EMPTIED) if emptied else SchemaState(SchemaKind.EMPTY)
    return SchemaState(_kind(revisions[0]), revisions)


def _kind(revision: str) -> SchemaKind:
    ours = head()
    if revision == ours:
        return SchemaKind.CURRENT
    if revision in _known():
        return SchemaKind.OLDER
    if _NUMBERED.fullmatch(revision) and _NUMBERED.fullmatch(ours) and revision > ours:
        return SchemaKind.NEWER
    return SchemaKind.UNKNOWN


def _known() -> set[str]:
    return set(_shipped())


def refusal(found: SchemaState) -> str:
    """Why no replica starts on this schema, in one line."""
    if found.kind is SchemaKind.SEVERAL:
        return (
            f"the version table holds {len(found.revisions)} revisions ({', '.join(found.revisions)}); "
            "a migrated database holds one: restore it from a backup"
        )
    if found.kind is SchemaKind.EMPTIED:
        return "the version table is empty but the tables exist: restore it from a backup"
    return (
        f"schema revision {found.revision!r} is not one this csb-bot knows (up to {head()}) nor "
        "numbered as a later one: restore the database from a backup"
    )


def current(connection: Connection) -> str | None:
    """The revision the database is at: None when empty (or unreadable, see `state`), FIRST when made
    before migrations."""
    return state(connection).revision


def _made_before_migrations(connection: Connection) -> bool:
    inspector = inspect(connection)
    return not inspector.has_table("alembic_version") and inspector.has_table("run_requests")


def upgrade(connection: Connection) -> None:
    """Bring the schema to `head()`; the caller holds the migration lock (see the module's docstring).

    A newer schema is left as it is (a rolling deploy's older replica runs on it); one no migration
    wrote raises SchemaProblem."""
    found = state(connection)
    if not found.startable:
        raise SchemaProblem(refusal(found))
    if found.kind is SchemaKind.NEWER:
        log.warning(
            "schema revision %s is newer than this csb-bot's %s: running on it unchanged (migrations only "
            "add); upgrade this csb-bot",
            found.revision,
            head(),
        )
        return
    if found.kind is SchemaKind.CURRENT:
        return  # nothing to apply, and no reason to load Alembic to find that out
    _migrate(connection)


class MigrationFailed(RuntimeError):
    """Alembic refused or failed to run the migrations (its CommandError, kept as the cause)."""


def _migrate(connection: Connection) -> None:
    from alembic import command  # see `_config`: loaded only when a migration runs
    from alembic.util.exc import CommandError

    config = _config(connection)
    before_migrations = _made_before_migrations(connection)
    if connection.dialect.name == "postgresql":
        connection.commit()  # the reads above: Alembic begins the upgrade's transaction itself
    try:
        if before_migrations:
            command.stamp(config, FIRST)  # made by create_all before migrations: it holds FIRST's schema
        command.upgrade(config, "head")
    except CommandError as exc:
        raise MigrationFailed(str(exc)) from exc
