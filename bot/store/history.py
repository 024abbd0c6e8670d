"""Finished runs, for `/csb runs` and `/csb compare`: read-only queries, newest first."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.states import RunState
from bot.store import models
from bot.store.records import Run, RunRequest

__all__ = ["finished_runs", "run_with_request"]


async def finished_runs(session: AsyncSession, limit: int) -> list[tuple[Run, RunRequest]]:
    """At most `limit` finished runs with their requests, the newest finish first."""
    rows = await session.execute(
        select(models.Run, models.RunRequest)
        .join(models.RunRequest, col(models.RunRequest.id) == col(models.Run.request_id))
        .where(col(models.Run.state) == RunState.FINISHED)
        .order_by(col(models.Run.finished_at).desc(), col(models.Run.id).desc())
        .limit(limit)
    )
    return [(Run.from_row(row[0]), RunRequest.from_row(row[1])) for row in rows.all()]


async def run_with_request(session: AsyncSession, run_id: int) -> tuple[Run, RunRequest] | None:
    rows = await session.execute(
        select(models.Run, models.RunRequest)
        .join(models.RunRequest, col(models.RunRequest.id) == col(models.Run.request_id))
        .where(col(models.Run.id) == run_id)
    )
    row = rows.first()
    return None if row is None else (Run.from_row(row[0]), RunRequest.from_row(row[1]))
