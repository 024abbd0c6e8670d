"""Run requests: created pending, decided once. Every decision is a guarded UPDATE."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from sqlalchemy import ColumnElement, and_, func, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.spec import Category
from bot.domain.states import RequestState, check_request_move
from bot.store import records
from bot.store.models import RunRequest
from bot.store.narrow import rowcount

# The first key of the two-key advisory lock on a slash command's trigger_id ("csbt" in ASCII, an int4);
# the migration lock takes the one-key form, so the two never meet.
_TRIGGER_LOCK_SPACE = 0x63736274


async def create_request(session: AsyncSession, new: records.NewRequest) -> records.RunRequest | None:
    """The new request; None when its slash command (`trigger_id`) already made one, in this process
    or another: the unique index decides, so two deliveries of one command make one request.

    Request numbers are what people see, and PostgreSQL spends a sequence value on an insert the unique
    index then refuses: so deliveries of one command first meet on a lock of their `trigger_id` and
    look, and only the first inserts. The index still decides should the lock be missing."""
    if new.trigger_id is not None:
        await _lock_trigger(session, new.trigger_id)
        if await by_trigger(session, new.trigger_id) is not None:
            return None
    request = RunRequest(
        spec_json=new.spec.model_dump_json(),
        spec_hash=new.spec.spec_hash(),
        requester=new.requester,
        channel_id=new.channel_id,
        response_url=new.response_url,
        created_at=new.created_at,
        category=new.category,
        checks_json=new.checks_json,
        expires_at=new.expires_at,
        trigger_id=new.trigger_id,
    )
    try:
        async with session.begin_nested():
            session.add(request)
            await session.flush()
    except IntegrityError:
        if request.trigger_id is None:
            raise
        return None
    return records.RunRequest.from_row(request, new.spec)


async def _lock_trigger(session: AsyncSession, trigger_id: str) -> None:
    """Hold, until the transaction ends, a lock that every delivery of this command asks for
    (PostgreSQL; SQLite's one writer at a time already orders them)."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(
            text("SELECT pg_advisory_xact_lock(:space, hashtext(:trigger))"),
            {"space": _TRIGGER_LOCK_SPACE, "trigger": trigger_id},
        )


async def by_trigger(session: AsyncSession, trigger_id: str) -> records.RunRequest | None:
    rows = await session.execute(select(RunRequest).where(col(RunRequest.trigger_id) == trigger_id))
    request = rows.scalar_one_or_none()
    return None if request is None else records.RunRequest.from_row(request)


async def get_request(session: AsyncSession, request_id: int) -> records.RunRequest | None:
    request = await session.get(RunRequest, request_id)
    return None if request is None else records.RunRequest.from_row(request)


async def decide(
    session: AsyncSession,
    request_id: int,
    *,
    to: RequestState,
    actor: str,
    now: datetime,
    revision: int,
    reason: str | None = None,
) -> bool:
    """Move a pending request's `revision` to `to`.

    False when someone already decided or the request was edited meanwhile, so concurrent clicks give
    one launch and an approval never applies to parameters the approver did not see.
    """
    check_request_move(RequestState.PENDING, to)
    result = await session.execute(
        update(RunRequest)
        .where(*_pending_at(request_id, revision))
        .values(state=to, decided_by=actor, decided_at=now, reason=reason)
    )
    return rowcount(result) == 1


async def hold_revision(session: AsyncSession, request_id: int, revision: int) -> bool:
    """Within an approval's transaction: True only while the request is pending at exactly `revision`.

    A guarded no-op UPDATE rather than a read, so it takes the row's write lock on every database: an
    Edit committing between this check and the approval's insert waits, and an approval can never count
    for parameters other than those on the card that was clicked.
    """
    result = await session.execute(
        update(RunRequest)
        .where(*_pending_at(request_id, revision))
        .values(revision=revision)
        .returning(col(RunRequest.id))
    )
    return result.first() is not None


async def revise(
    session: AsyncSession,
    request_id: int,
    *,
    revision: int,
    spec_json: str,
    spec_hash: str,
    category: str,
    checks_json: str,
    change_note: str,
) -> bool:
    """A new revision of a pending request; approvals of older revisions no longer count."""
    result = await session.execute(
        update(RunRequest)
        .where(*_pending_at(request_id, revision))
        .values(
            revision=revision + 1,
            spec_json=spec_json,
            spec_hash=spec_hash,
            category=category,
            checks_json=checks_json,
            change_note=change_note,
        )
    )
    return rowcount(result) == 1


async def set_checks(session: AsyncSession, request_id: int, revision: int, checks_json: str) -> None:
    await session.execute(
        update(RunRequest)
        .where(col(RunRequest.id) == request_id, col(RunRequest.revision) == revision)
        .values(checks_json=checks_json)
    )


async def pending_due(session: AsyncSession, now: datetime) -> list[records.RunRequest]:
    """Pending requests past their expiry."""
    rows = await session.execute(
        select(RunRequest).where(
            col(RunRequest.state) == RequestState.PENDING, col(RunRequest.expires_at) <= now
        )
    )
    return [records.RunRequest.from_row(request) for request in rows.scalars()]


async def waiting(session: AsyncSession, cutoffs: Mapping[Category, datetime]) -> list[records.PendingWait]:
    """Pending requests of each category in `cutoffs` last reminded (or, never reminded, made) at or
    before its cutoff: the reminder timer's candidates. Their specs are not read: the timer runs every
    half minute on the event loop, and a burst of requests pending would be parsed each time."""
    if not cutoffs:
        return []
    last = func.coalesce(col(RunRequest.reminded_at), col(RunRequest.created_at))
    rows = await session.execute(
        select(
            col(RunRequest.id),
            col(RunRequest.category),
            col(RunRequest.created_at),
            col(RunRequest.reminded_at),
        )
        .where(
            col(RunRequest.state) == RequestState.PENDING,
            or_(*(and_(col(RunRequest.category) == c, last <= cutoff) for c, cutoff in cutoffs.items())),
        )
        .order_by(col(RunRequest.id))
    )
    return [
        records.PendingWait(records.stored_id(row), row.category, row.created_at, row.reminded_at)
        for row in rows
    ]


async def mark_reminded(session: AsyncSession, request_id: int, now: datetime) -> bool:
    """Remember the last reminder, so the next one waits a full interval."""
    result = await session.execute(
        update(RunRequest).where(col(RunRequest.id) == request_id).values(reminded_at=now)
    )
    return rowcount(result) == 1


async def set_card_ts(session: AsyncSession, request_id: int, ts: str) -> None:
    await session.execute(update(RunRequest).where(col(RunRequest.id) == request_id).values(card_ts=ts))


def _pending_at(request_id: int, revision: int) -> tuple[ColumnElement[bool], ...]:
    """The guard of every change a click makes to a request: still pending, still at the revision seen."""
    return (
        col(RunRequest.id) == request_id,
        col(RunRequest.state) == RequestState.PENDING,
        col(RunRequest.revision) == revision,
    )


async def mark_budget_override(session: AsyncSession, request_id: int, revision: int, actor: str) -> None:
    """The deciding approval came past the monthly budget's block line: its run is not drained for it."""
    await session.execute(
        update(RunRequest)
        .where(col(RunRequest.id) == request_id, col(RunRequest.revision) == revision)
        .values(budget_override_by=actor)
    )
