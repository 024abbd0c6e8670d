"""The timer lease: one row per duty says which bot process runs it, until it expires.

Taking the lease is a guarded UPDATE on the holder seen a moment before, so two processes that both
find it expired cannot both take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store import records
from bot.store.models import Lease
from bot.store.narrow import rowcount

ENGINE_LEASE = "engine"


@dataclass(frozen=True)
class Claimant:
    """Who asks for the lease: a unique holder id and where its process lives."""

    holder: str
    host: str
    pid: int


async def get_lease(session: AsyncSession, name: str = ENGINE_LEASE) -> records.Lease | None:
    lease = (await session.execute(select(Lease).where(col(Lease.name) == name))).scalar_one_or_none()
    return None if lease is None else records.Lease.from_row(lease)


async def take(
    session: AsyncSession,
    claimant: Claimant,
    *,
    now: datetime,
    ttl: timedelta,
    slots: int,
    expected_holder: str | None,
    name: str = ENGINE_LEASE,
) -> bool:
    """Take or renew the lease, if its holder is still `expected_holder` (None: there is no row yet)."""
    values: dict[str, Any] = {
        "holder": claimant.holder,
        "host": claimant.host,
        "pid": claimant.pid,
        "expires_at": now + ttl,
        "renewed_at": now,
        "slots": slots,
    }
    if expected_holder is None:
        try:
            async with session.begin_nested():
                session.add(Lease(name=name, **values))
        except IntegrityError:
            return False  # someone else created it first
        return True
    result = await session.execute(
        update(Lease)
        .where(col(Lease.name) == name, col(Lease.holder) == expected_holder)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    return rowcount(result) == 1


async def release(session: AsyncSession, holder: str, now: datetime, name: str = ENGINE_LEASE) -> bool:
    """Expire our own lease now, so a successor does not wait out the ttl."""
    result = await session.execute(
        update(Lease).where(col(Lease.name) == name, col(Lease.holder) == holder).values(expires_at=now)
    )
    return rowcount(result) == 1


async def holds(session: AsyncSession, holder: str, now: datetime, name: str = ENGINE_LEASE) -> bool:
    """The fence: state changes that start processes check this in their own transaction. The row is
    read FOR SHARE (PostgreSQL; SQLite's write lock already covers it), so a successor's takeover waits
    until that transaction has committed and then sees everything it did."""
    lease = (
        await session.execute(select(Lease).where(col(Lease.name) == name).with_for_update(read=True))
    ).scalar_one_or_none()
    return lease is not None and lease.holder == holder and lease.expires_at > now
