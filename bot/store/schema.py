"""Schema upgrades by the Alembic migrations in bot/store/migrations, one process at a time.

`csb-bot serve` runs them at start and `csb-bot db upgrade` on demand. Each upgrade is one transaction
that first takes the migration lock (PostgreSQL: a transaction advisory lock; SQLite: the write lock,
taken at BEGIN IMMEDIATE by the caller), so replicas started in the same second upgrade in turn and the
later ones find nothing left to do.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

# The revision whose schema a database made before migrations existed already has (see its docstring).
FIRST = "0001"
# pg_advisory_xact_lock's key: any constant the bot's other locks do not use ("csbm" in ASCII).
MIGRATION_LOCK = 0x6373_626D


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", "bot.store:migrations")
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision this version of the bot ships."""
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    assert revision is not None, "the package ships its migrations"
    return revision


def current(connection: Connection) -> str | None:
    """The revision the database is at: None when empty, FIRST when made before migrations."""
    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is None and _made_before_migrations(connection):
        return FIRST
    return revision


def _made_before_migrations(connection: Connection) -> bool:
    inspector = inspect(connection)
    return not inspector.has_table("alembic_version") and inspector.has_table("run_requests")


def upgrade(connection: Connection) -> None:
    """Bring the schema to `head()` inside the caller's transaction, after taking the migration lock."""
    if connection.dialect.name == "postgresql":
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
    config = _config(connection)
    if _made_before_migrations(connection):
        command.stamp(config, FIRST)  # made by create_all before migrations: it holds FIRST's schema
    command.upgrade(config, "head")
