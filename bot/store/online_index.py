"""An index added to a table the bot keeps writing to, for the migrations that need one.

On PostgreSQL a plain `CREATE INDEX` holds a lock that stops every write to the table until the index is
built, which on a year of lanes is longer than an ack may wait. `CREATE INDEX CONCURRENTLY` lets writes
go on, but cannot run inside a transaction, so the migration steps out of Alembic's transaction for it
(`autocommit_block`: the revisions before it are committed first, and the ones after it start a new
transaction). What keeps two replicas from building it at once is the session-level migration lock
(`bot/store/schema.py`), which outlives those commits. A build that was stopped half way (the process
killed) leaves an index PostgreSQL marks invalid; the next upgrade finds it, drops it and builds it again.

SQLite has no concurrent build and no transaction to step out of: there the index is created in the
upgrade's one transaction, under the write lock.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

__all__ = ["create_index"]


def create_index(name: str, table: str, columns: Sequence[str]) -> None:
    """Create index `name` on `table`'s `columns` unless a valid one exists (a database made by
    `create_all` of a later build has it)."""
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        if name not in {index["name"] for index in sa.inspect(bind).get_indexes(table)}:
            op.create_index(name, table, list(columns))
        return
    with op.get_context().autocommit_block():
        valid = _validity(name)
        if valid:
            return
        if valid is False:  # a concurrent build that did not finish
            op.drop_index(name, table_name=table, postgresql_concurrently=True)
        # Waiting for transactions that began before the build is harmless here: no write waits on it.
        op.execute("SET lock_timeout = 0")
        op.create_index(name, table, list(columns), postgresql_concurrently=True)
        op.execute("RESET lock_timeout")


def _validity(name: str) -> bool | None:
    """True: a valid index of that name; False: one left invalid by a build that stopped; None: none."""
    found = op.get_bind().execute(
        sa.text("SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass(:name)"), {"name": name}
    )
    row = found.first()
    return None if row is None else bool(row[0])
