"""Who has an App Home tab to keep fresh, and the read-only queries that fill it."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.states import ACTIVE_RUN_STATES, RequestState
from bot.store import records
from bot.store.models import HomeViewer, Run, RunRequest
from bot.store.upsert import insert


async def add_viewer(session: AsyncSession, user_id: str, now: datetime) -> None:
    """Note (or refresh) who opened the tab; two processes handling two openings agree by the key."""
    statement = insert(session, HomeViewer).values(user_id=user_id, opened_at=now)
    await session.execute(
        statement.on_conflict_do_update(index_elements=["user_id"], set_={"opened_at": now})
    )


async def viewers(session: AsyncSession) -> list[str]:
    rows = await session.execute(select(col(HomeViewer.user_id)).order_by(col(HomeViewer.user_id)))
    return list(rows.scalars())


async def pending_requests(session: AsyncSession, limit: int = 20) -> list[records.RunRequest]:
    rows = await session.execute(
        select(RunRequest)
        .where(col(RunRequest.state) == RequestState.PENDING)
        .order_by(col(RunRequest.id))
        .limit(limit)
    )
    return [records.RunRequest.from_row(request) for request in rows.scalars()]


async def live_runs_of(
    session: AsyncSession, user_id: str, limit: int = 10
) -> list[tuple[records.RunRequest, records.Run]]:
    """Someone's runs not closed yet, the newest first (their closed ones are in `summaries`)."""
    rows = await session.execute(
        select(RunRequest, Run)
        .join(Run, col(Run.request_id) == col(RunRequest.id))
        .where(col(RunRequest.requester) == user_id, col(Run.state).in_(list(ACTIVE_RUN_STATES)))
        .order_by(col(Run.id).desc())
        .limit(limit)
    )
    return [_pair(request, run) for request, run in rows.all()]


def _pair(request: RunRequest, run: Run) -> tuple[records.RunRequest, records.Run]:
    return records.RunRequest.from_row(request), records.Run.from_row(run)
