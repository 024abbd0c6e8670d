"""The outbox: everything the bot says is a row here first, so nothing is lost if Slack or the bot is down."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain import events, outbox_keys
from bot.domain.events import Event
from bot.store import records
from bot.store.models import ONE_PENDING_WHERE, OutboxItem, RunRequest
from bot.store.narrow import rowcount, table_of
from bot.store.records import OutboxKind, OutboxState
from bot.store.runs import request_id_of
from bot.store.upsert import insert

# Kinds whose send renders the current state (an edit or a publish), so sending again is harmless.
REDRAWN_KINDS = frozenset({OutboxKind.CARD, OutboxKind.STATUS, OutboxKind.HOME, OutboxKind.PROMOTION})
# Replies in a card's thread: they go in the order things happened (see `thread_order`).
THREAD_KINDS = frozenset({OutboxKind.NOTICE, OutboxKind.SUMMARY})


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
    row = insert(session, OutboxItem).values(
        target=target,
        kind=kind,
        state=OutboxState.PENDING,
        request_id=request_id,
        run_id=run_id,
        text=text,
        response_url=response_url,
        user_id=user_id,
        attempts=0,
        generation=0,
        next_attempt_at=now,
        created_at=now,
    )
    # The partial unique index (one pending row per target) is where two writers meet.
    conflict = {"index_elements": ["target"], "index_where": sql_text(ONE_PENDING_WHERE)}
    if kind in REDRAWN_KINDS:
        generation = table_of(OutboxItem).c.generation
        statement = row.on_conflict_do_update(**conflict, set_={"generation": generation + 1})
    else:
        statement = row.on_conflict_do_nothing(**conflict)
    await session.execute(statement)


async def due(
    session: AsyncSession, now: datetime, limit: int = 50, after_id: int = 0
) -> list[records.OutboxItem]:
    """Rows to send now, oldest first; `after_id` pages on past rows already looked at."""
    rows = await session.execute(
        select(OutboxItem)
        .where(
            col(OutboxItem.state) == OutboxState.PENDING,
            col(OutboxItem.next_attempt_at) <= now,
            col(OutboxItem.id) > after_id,
        )
        .order_by(col(OutboxItem.id))
        .limit(limit)
    )
    return [records.OutboxItem.from_row(item) for item in rows.scalars()]


async def channels_of(session: AsyncSession, items: list[records.OutboxItem]) -> dict[int, str]:
    """The channel of each row's request, by request id: rows of one channel go in order."""
    wanted = {thread for thread in map(thread_of, items) if thread is not None}
    if not wanted:
        return {}
    rows = await session.execute(
        select(col(RunRequest.id), col(RunRequest.channel_id)).where(col(RunRequest.id).in_(wanted))
    )
    return {request_id: channel for request_id, channel in rows.all() if request_id is not None}


async def get_due(session: AsyncSession, item_id: int, now: datetime) -> records.OutboxItem | None:
    """The row as it is now, if it is still to send: another delivery round may have sent it since it
    was listed, or bumped its generation."""
    rows = await session.execute(
        select(OutboxItem).where(
            col(OutboxItem.id) == item_id,
            col(OutboxItem.state) == OutboxState.PENDING,
            col(OutboxItem.next_attempt_at) <= now,
        )
    )
    item = rows.scalars().first()
    return None if item is None else records.OutboxItem.from_row(item)


async def note_post_attempt(session: AsyncSession, item_id: int, now: datetime) -> None:
    """Before a chat.postMessage: from now on a re-send looks for the message first."""
    await session.execute(
        update(OutboxItem).where(col(OutboxItem.id) == item_id).values(post_attempted_at=now)
    )


async def mark_sent(session: AsyncSession, item: records.OutboxItem, now: datetime) -> bool:
    """Retire the row, unless the message was asked for again since `item` was read (then it is due
    again at once, with its attempts reset: the send itself succeeded). False in that case."""
    sent = await session.execute(
        update(OutboxItem)
        .where(col(OutboxItem.id) == item.id, col(OutboxItem.generation) == item.generation)
        .values(state=OutboxState.SENT, sent_at=now)
    )
    if rowcount(sent):
        return True
    await session.execute(
        update(OutboxItem)
        .where(col(OutboxItem.id) == item.id, col(OutboxItem.state) == OutboxState.PENDING)
        .values(attempts=0, next_attempt_at=now, error=None)
    )
    return False


async def set_aside(session: AsyncSession, item_id: int, error: str) -> None:
    """Give the row up with its reason: Slack refused it for good, or it cannot be rendered."""
    await session.execute(
        update(OutboxItem).where(col(OutboxItem.id) == item_id).values(state=OutboxState.DEAD, error=error)
    )


async def count_set_aside(session: AsyncSession) -> int:
    """Rows given up, for the admins' App Home: each one is a message somebody did not get."""
    rows = await session.execute(
        select(func.count()).select_from(OutboxItem).where(col(OutboxItem.state) == OutboxState.DEAD)
    )
    return int(rows.scalar_one())


async def postpone(
    session: AsyncSession, item_id: int, *, attempts: int, until: datetime, error: str
) -> None:
    await session.execute(
        update(OutboxItem)
        .where(col(OutboxItem.id) == item_id)
        .values(attempts=attempts, next_attempt_at=until, error=error)
    )


async def exists(session: AsyncSession, target: str) -> bool:
    """Whether a message with this target was ever queued: milestones are posted once."""
    rows = await session.execute(select(col(OutboxItem.id)).where(col(OutboxItem.target) == target).limit(1))
    return rows.first() is not None


def thread_of(item: records.OutboxItem) -> int | None:
    """The request whose card thread the row belongs to (a run's row names its request by the rule of
    `runs.run_id_of`, as the queries below do by coalescing the two ids)."""
    if item.request_id is not None:
        return item.request_id
    return request_id_of(item.run_id) if item.run_id is not None else None


def thread_order(item: records.OutboxItem) -> tuple[datetime, int, int]:
    """When it happened, then: a run's start opens its thread and its report closes it, then row order."""
    if item.kind is OutboxKind.SUMMARY:
        rank = 2
    elif outbox_keys.is_start(item.target):
        rank = 0
    else:
        rank = 1
    return item.created_at, rank, item.id


async def earlier_in_thread(session: AsyncSession, item: records.OutboxItem) -> records.OutboxItem | None:
    """The first reply that happened before `item` and still waits to go in the same thread, if any.
    Rows set aside are not pending, so they never hold a thread up."""
    thread = thread_of(item)
    if item.kind not in THREAD_KINDS or thread is None:
        return None
    rows = await session.execute(
        select(OutboxItem).where(
            col(OutboxItem.state) == OutboxState.PENDING,
            col(OutboxItem.kind).in_(list(THREAD_KINDS)),
            func.coalesce(col(OutboxItem.request_id), col(OutboxItem.run_id)) == thread,
            col(OutboxItem.id) != item.id,
        )
    )
    mine = thread_order(item)
    earlier = (r for r in map(records.OutboxItem.from_row, rows.scalars()) if thread_order(r) < mine)
    return min(earlier, key=thread_order, default=None)


async def pending_threads(session: AsyncSession, now: datetime) -> list[int]:
    """Requests with thread replies due now: their milestones are brought up to date before any goes."""
    rows = await session.execute(
        select(func.coalesce(col(OutboxItem.request_id), col(OutboxItem.run_id)))
        .where(
            col(OutboxItem.state) == OutboxState.PENDING,
            col(OutboxItem.kind).in_(list(THREAD_KINDS)),
            col(OutboxItem.next_attempt_at) <= now,
        )
        .distinct()
    )
    return [int(thread) for thread in rows.scalars() if thread is not None]


async def redraw_card(session: AsyncSession, request_id: int, now: datetime) -> None:
    """Queue a post (or a redraw) of the request's card; redraws pending for it merge into one."""
    await enqueue(
        session, kind=OutboxKind.CARD, target=outbox_keys.card(request_id), now=now, request_id=request_id
    )


async def redraw_run(session: AsyncSession, run_id: int, now: datetime) -> None:
    """Queue a redraw of the run's status card; redraws pending for the same card merge into one."""
    await enqueue(session, kind=OutboxKind.STATUS, target=outbox_keys.status(run_id), now=now, run_id=run_id)


async def tell_run(session: AsyncSession, run_id: int, *, what: str, event: Event, now: datetime) -> None:
    """A line in the run's thread, and its card redrawn to match. The row keeps the event, not words:
    the notifier's sender renders it through the views when it sends."""
    target = outbox_keys.notice(run_id, what, now)
    text = events.dump(event)
    await enqueue(session, kind=OutboxKind.NOTICE, target=target, now=now, run_id=run_id, text=text)
    await redraw_run(session, run_id, now)


async def redraw_promotion(session: AsyncSession, promotion_id: int, run_id: int, now: datetime) -> None:
    """Queue a post (or a redraw) of a promotion's card; redraws pending for it merge into one."""
    target = outbox_keys.promotion(promotion_id)
    await enqueue(session, kind=OutboxKind.PROMOTION, target=target, now=now, run_id=run_id)
