"""Old sent outbox rows go, in small batches by primary key range, so the table grows with the messages
still to send, not with a year of history.

What goes: rows sent (`sent_at`) before the cutoff. What stays: every row not yet sent; rows set aside
(each is a message somebody did not get, counted on the admins' App Home, and has no `sent_at` to age
by); rows whose key `outbox.exists` asks about (`outbox_keys.ONCE_EVER`: without them a milestone or a
DM would go again). Audit rows live in their own table and are never touched here: they are the record.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, delete, not_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain import outbox_keys
from bot.store.models import OutboxItem
from bot.store.records import OutboxState

__all__ = ["delete_range", "next_range"]


def _prunable(cutoff: datetime) -> tuple[ColumnElement[bool], ...]:
    kept = [col(OutboxItem.target).startswith(outbox_keys.topic_prefix(t)) for t in outbox_keys.ONCE_EVER]
    return (
        col(OutboxItem.state) == OutboxState.SENT,
        col(OutboxItem.sent_at) < cutoff,
        *(not_(keep) for keep in kept),
    )


async def next_range(
    session: AsyncSession, cutoff: datetime, after_id: int, size: int
) -> tuple[int, int] | None:
    """The first and last id of the next `size` prunable rows past `after_id` (a read: no write lock)."""
    rows = await session.execute(
        select(col(OutboxItem.id))
        .where(col(OutboxItem.id) > after_id, *_prunable(cutoff))
        .order_by(col(OutboxItem.id))
        .limit(size)
    )
    ids = [int(found) for found in rows.scalars() if found is not None]
    return (ids[0], ids[-1]) if ids else None


async def delete_range(session: AsyncSession, first: int, last: int, cutoff: datetime) -> int:
    """Delete the prunable rows with ids in [first, last]; the rule is asked again in the DELETE, so a
    row that changed since the range was read is left alone. Returns how many went."""
    gone = await session.execute(
        delete(OutboxItem)
        .where(col(OutboxItem.id) >= first, col(OutboxItem.id) <= last, *_prunable(cutoff))
        .returning(col(OutboxItem.id))
    )
    return len(gone.all())
