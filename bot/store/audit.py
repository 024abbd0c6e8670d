"""The append-only audit trail: one row per state change."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.policy import BOT_ACTOR
from bot.store import records
from bot.store.models import AuditEvent, RunRequest


async def record(
    session: AsyncSession,
    *,
    request_id: int,
    action: str,
    actor: str,
    at: datetime,
    spec_hash: str,
    run_id: int | None = None,
    revision: int = 1,
    reason: str | None = None,
) -> None:
    session.add(
        AuditEvent(
            request_id=request_id,
            run_id=run_id,
            action=action,
            actor=actor,
            at=at,
            spec_hash=spec_hash,
            revision=revision,
            reason=reason,
        )
    )


async def record_run(
    session: AsyncSession, run: records.Run, action: str, at: datetime, reason: str | None = None
) -> None:
    """A run's state change made by the bot itself, under the spec hash and revision that were approved."""
    request = await session.get(RunRequest, run.request_id)
    assert request is not None
    await record(
        session,
        request_id=run.request_id,
        run_id=run.id,
        action=action,
        actor=BOT_ACTOR,
        at=at,
        spec_hash=request.spec_hash,
        revision=request.revision,
        reason=reason,
    )


async def editors(session: AsyncSession, request_id: int) -> set[str]:
    """Everyone who edited the request: each is held to the requester's rules for what they shaped."""
    rows = await session.execute(
        select(col(AuditEvent.actor)).where(
            col(AuditEvent.request_id) == request_id, col(AuditEvent.action) == "edited"
        )
    )
    return set(rows.scalars())


async def events_for(session: AsyncSession, request_id: int) -> list[records.AuditEvent]:
    rows = await session.execute(
        select(AuditEvent).where(col(AuditEvent.request_id) == request_id).order_by(col(AuditEvent.id))
    )
    return [records.AuditEvent.from_row(event) for event in rows.scalars()]
