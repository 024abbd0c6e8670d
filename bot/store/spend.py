"""A month's spend: the recorded cost of the lanes that finished in it (`ix_lanes_finished`).

A lane's cost is what the bot stored as it ended (`task_metrics.json`'s `cost_usd`, else CSB's per-token
formula; `bot/csb/verdicts/cost.py`); a lane that reported none adds nothing and is counted apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.spend import SpendRow
from bot.domain.states import COMPLETED_LANE_STATES, UNSTOPPED_RUN_STATES
from bot.store import records
from bot.store.models import Lane, Run, RunRequest


def _in_month(start: datetime, end: datetime) -> tuple[Any, ...]:
    """Lanes that ran to an end in [start, end), or were stopped with a cost; a lane dropped before it
    started (cancelled, no cost) spent nothing and is not counted."""
    ran = or_(col(Lane.state).in_(list(COMPLETED_LANE_STATES)), col(Lane.cost_usd).is_not(None))
    return (col(Lane.finished_at) >= start, col(Lane.finished_at) < end, ran)


async def month_spent(
    session: AsyncSession, start: datetime, end: datetime, *, category: str, model: str | None = None
) -> float:
    """Dollars recorded by lanes of `category` (and `model`) that finished in [start, end)."""
    query = (
        select(func.coalesce(func.sum(col(Lane.cost_usd)), 0.0))
        .join(Run, col(Run.id) == col(Lane.run_id))
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(*_in_month(start, end), col(RunRequest.category) == category)
    )
    if model is not None:
        query = query.where(col(Run.model) == model)
    return float((await session.execute(query)).scalar_one() or 0.0)


async def spend_rows(session: AsyncSession, start: datetime, end: datetime) -> list[SpendRow]:
    """The month's lanes summed per category, model, suite and config."""
    keys = (col(RunRequest.category), col(Run.model), col(Lane.suite), col(Lane.config))
    rows = await session.execute(
        select(
            *keys,
            func.count(),
            func.count(col(Lane.cost_usd)),
            func.coalesce(func.sum(col(Lane.cost_usd)), 0.0),
        )
        .join(Run, col(Run.id) == col(Lane.run_id))
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(*_in_month(start, end))
        .group_by(*keys)
    )
    return [
        SpendRow(
            category=category,
            model=model,
            suite=suite,
            config=config,
            lanes=int(lanes),
            priced=int(priced),
            cost_usd=float(cost or 0.0),
        )
        for category, model, suite, config, lanes, priced, cost in rows.all()
    ]


async def unstopped_runs(session: AsyncSession) -> list[tuple[records.Run, str]]:
    """Runs that may still start lanes, with their category, except those approved past the budget's
    block line (`budget_override_by`): the budget does not drain what an override approver let run."""
    rows = await session.execute(
        select(Run, col(RunRequest.category))
        .join(RunRequest, col(RunRequest.id) == col(Run.request_id))
        .where(col(Run.state).in_(list(UNSTOPPED_RUN_STATES)), col(RunRequest.budget_override_by).is_(None))
        .order_by(col(Run.id))
    )
    return [(records.Run.from_row(run), category) for run, category in rows.all()]
