"""Orphaned lane processes: what the engine last found on each host, replaced at every look."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store import records
from bot.store.models import OrphanProcess


async def replace_for_host(
    session: AsyncSession, host: str, found: Sequence[tuple[str, int, str | None]], now: datetime
) -> bool:
    """This host's orphans are now `found` (marker, pid, job); True when the set changed."""
    rows = await session.execute(select(OrphanProcess).where(col(OrphanProcess.host) == host))
    before = {(row.marker, row.pid) for row in rows.scalars()}
    after = {(marker, pid) for marker, pid, _ in found}
    await session.execute(delete(OrphanProcess).where(col(OrphanProcess.host) == host))
    for marker, pid, job in found:
        session.add(OrphanProcess(marker=marker, host=host, pid=pid, job=job, seen_at=now))
    return before != after


async def all_orphans(session: AsyncSession) -> list[records.OrphanProcess]:
    rows = await session.execute(
        select(OrphanProcess).order_by(col(OrphanProcess.host), col(OrphanProcess.pid))
    )
    return [records.OrphanProcess.from_row(row) for row in rows.scalars()]
