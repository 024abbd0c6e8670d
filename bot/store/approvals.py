"""Approvals of a request's current revision; distinct people, counted in the deciding transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store.models import Approval
from bot.store.upsert import insert


async def add_approval(
    session: AsyncSession, request_id: int, revision: int, user_id: str, now: datetime
) -> bool:
    """False when this person already approved this revision: a double click counts once, even when
    its two deliveries reach two bot processes at the same moment (the unique key decides)."""
    statement = (
        insert(session, Approval)
        .values(request_id=request_id, revision=revision, user_id=user_id, at=now)
        .on_conflict_do_nothing(index_elements=["request_id", "revision", "user_id"])
        .returning(col(Approval.id))
    )
    return (await session.execute(statement)).first() is not None


async def approvers(session: AsyncSession, request_id: int, revision: int) -> list[str]:
    rows = await session.execute(
        select(col(Approval.user_id))
        .where(col(Approval.request_id) == request_id, col(Approval.revision) == revision)
        .order_by(col(Approval.id))
    )
    return list(rows.scalars())
