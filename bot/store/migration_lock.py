"""PostgreSQL's migration lock: one process upgrades the schema at a time, however many start together.

It is a session-level advisory lock, not a transaction's: an upgrade that builds an index concurrently
commits part way (`bot/store/online_index.py`), and a transaction lock would be let go at that commit,
letting a second replica start the same revision. The lock is held from before the version table is
read until the upgrade's last commit, and let go explicitly (the connection is closed after, which would
let it go anyway, as would the process dying).

A replica that finds it taken asks again every `POLL_SEC`, each time in a short transaction of its own,
instead of waiting inside one: `CREATE INDEX CONCURRENTLY` waits for every transaction older than its
build to end, and a replica blocked in `pg_advisory_lock` would be one, waiting in turn for the lock the
builder holds: a deadlock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

__all__ = ["POLL_SEC", "held"]

log = logging.getLogger(__name__)

POLL_SEC = 0.2


@contextlib.asynccontextmanager
async def held(conn: AsyncConnection, key: int) -> AsyncIterator[None]:
    """Take the session lock `key` on `conn` (asking again until it is free), yield with `conn` outside a
    transaction, then let it go."""
    waited = False
    while not await _try(conn, key):
        if not waited:
            log.info("another process is upgrading the schema; waiting for it")
            waited = True
        await asyncio.sleep(POLL_SEC)
    try:
        yield
    finally:
        # The connection is closed after this, which lets the lock go even when this cannot (it broke).
        with contextlib.suppress(SQLAlchemyError, OSError):
            await conn.rollback()
            await conn.exec_driver_sql(f"SELECT pg_advisory_unlock({int(key)})")
            await conn.commit()


async def _try(conn: AsyncConnection, key: int) -> bool:
    taken = bool((await conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({int(key)})")).scalar_one())
    await conn.commit()  # a session lock outlives the transaction; the transaction must not linger
    return taken
