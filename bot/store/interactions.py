"""Clicks and modal submits already handled, so a replayed one is recognised; rows older than the
replay window go."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store.models import SeenInteraction
from bot.store.upsert import insert


async def first_sight(session: AsyncSession, key: str, now: datetime) -> bool:
    """True for the first process to record `key`; an insert that skips a conflict decides it, so two
    processes handling the same replay at once agree on which one goes ahead."""
    statement = (
        insert(session, SeenInteraction)
        .values(key=key, seen_at=now)
        .on_conflict_do_nothing(index_elements=["key"])
        .returning(col(SeenInteraction.key))
    )
    return (await session.execute(statement)).first() is not None


async def forget_before(session: AsyncSession, cutoff: datetime) -> None:
    await session.execute(delete(SeenInteraction).where(col(SeenInteraction.seen_at) < cutoff))
