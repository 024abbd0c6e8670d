"""The outbox: everything the bot says is a row here first, so nothing is lost if Slack or the bot is down."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import OutboxItem, OutboxKind, OutboxState

# Kinds whose send renders the current state (an edit or a publish), so sending again is harmless.
REDRAWN_KINDS = frozenset({OutboxKind.CARD, OutboxKind.STATUS, OutboxKind.HOME})


async def enqueue(
    session: AsyncSession,
    *,
    kind: OutboxKind,
    target: str,
    now: datetime,
    request_id: int | None = None,
    run_id: int | None = None,
    text: str | None = None,
    response_url: str | None = None,
    user_id: str | None = None,
) -> None:
    """Add a row unless one for the same message is still pending: that render will show the news too.

    For messages rendered from the tables at send time (cards, App Home) the pending row's generation
    is bumped, so a send already under way, which read the older state, leaves the row pending for one
    more render instead of retiring it. Posts are never re-sent that way: they would appear twice.
    """
    is_pending = (OutboxItem.target == target) & (OutboxItem.state == OutboxState.PENDING)
    pending = (await session.execute(select(OutboxItem.id).where(is_pending))).first()
    if pending is not None:
        if kind in REDRAWN_KINDS:
            bump = update(OutboxItem).where(OutboxItem.id == pending[0])
            await session.execute(bump.values(generation=OutboxItem.generation + 1))
        return
    session.add(
        OutboxItem(
            target=target,
            kind=kind,
            request_id=request_id,
            run_id=run_id,
            text=text,
            response_url=response_url,
            user_id=user_id,
            next_attempt_at=now,
            created_at=now,
        )
    )


async def due(session: AsyncSession, now: datetime, limit: int = 50) -> list[OutboxItem]:
    rows = await session.execute(
        select(OutboxItem)
        .where(OutboxItem.state == OutboxState.PENDING, OutboxItem.next_attempt_at <= now)
        .order_by(OutboxItem.id)
        .limit(limit)
    )
    return list(rows.scalars())


async def mark_sent(session: AsyncSession, item: OutboxItem, now: datetime) -> bool:
    """Retire the row, unless the message was asked for again since `item` was read (then it is due
    again at once, with its attempts reset: the send itself succeeded). False in that case."""
    sent = await session.execute(
        update(OutboxItem)
        .where(OutboxItem.id == item.id, OutboxItem.generation == item.generation)
        .values(state=OutboxState.SENT, sent_at=now)
    )
    if sent.rowcount:
        return True
    await session.execute(
        update(OutboxItem)
        .where(OutboxItem.id == item.id, OutboxItem.state == OutboxState.PENDING)
        .values(attempts=0, next_attempt_at=now, error=None)
    )
    return False


async def mark_dead(session: AsyncSession, item_id: int, error: str) -> None:
    await session.execute(
        update(OutboxItem).where(OutboxItem.id == item_id).values(state=OutboxState.DEAD, error=error)
    )


async def postpone(
    session: AsyncSession, item_id: int, *, attempts: int, until: datetime, error: str
) -> None:
    await session.execute(
        update(OutboxItem)
        .where(OutboxItem.id == item_id)
        .values(attempts=attempts, next_attempt_at=until, error=error)
    )


def backoff(attempts: int, *, base: float = 1.0, cap: float = 60.0) -> timedelta:
    """Capped exponential backoff for delivery retries (1, 2, 4 … 60 s)."""
    return timedelta(seconds=min(cap, base * 2 ** max(0, attempts - 1)))


async def exists(session: AsyncSession, target: str) -> bool:
    """Whether a message with this target was ever queued: milestones are posted once."""
    rows = await session.execute(select(OutboxItem.id).where(OutboxItem.target == target).limit(1))
    return rows.first() is not None


async def has_pending_notices(session: AsyncSession, request_id: int) -> bool:
    """Thread notices still to send for this request; the final report waits for them, to stay last."""
    rows = await session.execute(
        select(OutboxItem.id)
        .where(
            OutboxItem.request_id == request_id,
            OutboxItem.kind == OutboxKind.NOTICE,
            OutboxItem.state == OutboxState.PENDING,
        )
        .limit(1)
    )
    return rows.first() is not None


def status_target(run_id: int) -> str:
    return f"status:{run_id}"


def notice_target(run_id: int, what: str, at: datetime) -> str:
    return f"notice:{run_id}:{what}:{at.isoformat()}"


async def redraw_run(session: AsyncSession, run_id: int, now: datetime) -> None:
    """Queue a redraw of the run's status card; redraws pending for the same card merge into one."""
    await enqueue(session, kind=OutboxKind.STATUS, target=status_target(run_id), now=now, run_id=run_id)


async def tell_run(session: AsyncSession, run_id: int, *, what: str, text: str, now: datetime) -> None:
    """A line in the run's thread, and its card redrawn to match."""
    target = notice_target(run_id, what, now)
    await enqueue(session, kind=OutboxKind.NOTICE, target=target, now=now, run_id=run_id, text=text)
    await redraw_run(session, run_id, now)
