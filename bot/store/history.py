"""Finished runs, for `/csb runs` and `/csb compare`: read-only queries, newest first."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.states import RunState
from bot.store.models import Run, RunRequest

__all__ = ["finished_runs", "run_with_request"]


async def finished_runs(session: AsyncSession, limit: int) -> list[tuple[Run, RunRequest]]:
    """At most `limit` finished runs with their requests, the newest finish first."""
    rows = await session.execute(
        select(Run, RunRequest)
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(col(Run.state) == RunState.FINISHED)
        .order_by(col(Run.finished_at).desc(), col(Run.id).desc())
        .limit(limit)
    )
    return [(row[0], row[1]) for row in rows.all()]


async def run_with_request(session: AsyncSession, run_id: int) -> tuple[Run, RunRequest] | None:
    rows = await session.execute(
        select(Run, RunRequest)
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(col(Run.id) == run_id)
    )
    row = rows.first()
    return None if row is None else (row[0], row[1])
