"""Approvals of a request's current revision; distinct people, counted in the deciding transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import Approval


async def add_approval(
    session: AsyncSession, request_id: int, revision: int, user_id: str, now: datetime
) -> bool:
    """False when this person already approved this revision (a double click counts once)."""
    existing = await session.execute(
        select(Approval.id).where(
            Approval.request_id == request_id, Approval.revision == revision, Approval.user_id == user_id
        )
    )
    if existing.first() is not None:
        return False
    session.add(Approval(request_id=request_id, revision=revision, user_id=user_id, at=now))
    await session.flush()
    return True


async def approvers(session: AsyncSession, request_id: int, revision: int) -> list[str]:
    rows = await session.execute(
        select(Approval.user_id)
        .where(Approval.request_id == request_id, Approval.revision == revision)
        .order_by(Approval.id)
    )
    return list(rows.scalars())
