"""Run requests: created pending, decided once. Every decision is a guarded UPDATE."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import RequestState, RunRequest


async def create_request(session: AsyncSession, request: RunRequest) -> RunRequest:
    session.add(request)
    await session.flush()
    return request


async def get_request(session: AsyncSession, request_id: int) -> RunRequest | None:
    return await session.get(RunRequest, request_id)


async def decide(
    session: AsyncSession,
    request_id: int,
    *,
    to: RequestState,
    actor: str,
    now: datetime,
    reason: str | None = None,
) -> bool:
    """Move a pending request to `to`. False when someone already decided, so two clicks give one launch."""
    result = await session.execute(
        update(RunRequest)
        .where(RunRequest.id == request_id, RunRequest.state == RequestState.PENDING)
        .values(state=to, decided_by=actor, decided_at=now, reason=reason)
    )
    return result.rowcount == 1


async def set_card_ts(session: AsyncSession, request_id: int, ts: str) -> None:
    await session.execute(update(RunRequest).where(RunRequest.id == request_id).values(card_ts=ts))
