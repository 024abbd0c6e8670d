"""The history an estimate rests on: recent finished lanes per (suite, config), of the same model first.

Each group is one query that walks `ix_lanes_history` (suite, config, finished_at) from the newest
lane back and stops after `HISTORY_SAMPLE` rows, so the cost does not grow with the table: a 528-lane
request over 100,000 finished lanes is answered in a few milliseconds (`bench/estimate.py`). A group
with no lane of that model falls back to the suite's recent lanes of any config or model
(`ix_lanes_suite_finished`), asked once per suite.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.estimate import HISTORY_SAMPLE, Basis, GroupHistory, LaneSample
from bot.domain.states import COMPLETED_LANE_STATES
from bot.store.models import Lane, Run

_COLUMNS = (col(Lane.cost_usd), col(Lane.started_at), col(Lane.finished_at))


async def lane_history(
    session: AsyncSession, model: str, groups: Iterable[tuple[str, str]], limit: int = HISTORY_SAMPLE
) -> dict[tuple[str, str], GroupHistory]:
    """Per (suite, config) group: the same suite, config and model, else the same suite, else none."""
    found: dict[tuple[str, str], GroupHistory] = {}
    by_suite: dict[str, list[LaneSample]] = {}
    for suite, config in groups:
        exact = await _samples(
            session,
            limit,
            col(Lane.suite) == suite,
            col(Lane.config) == config,
            col(Run.model) == model,
        )
        if exact:
            found[(suite, config)] = GroupHistory(Basis.EXACT, exact)
            continue
        if suite not in by_suite:
            by_suite[suite] = await _samples(session, limit, col(Lane.suite) == suite)
        same_suite = by_suite[suite]
        found[(suite, config)] = GroupHistory(Basis.SUITE if same_suite else Basis.NONE, same_suite)
    return found


async def _samples(session: AsyncSession, limit: int, *where: Any) -> list[LaneSample]:
    rows = await session.execute(
        select(*_COLUMNS)
        .join(Run, col(Run.id) == col(Lane.run_id))
        .where(
            *where,
            col(Lane.finished_at).is_not(None),
            col(Lane.state).in_(list(COMPLETED_LANE_STATES)),
        )
        .order_by(col(Lane.finished_at).desc())
        .limit(limit)
    )
    return [
        LaneSample(
            cost_usd=cost,
            seconds=(end - start).total_seconds() if start is not None and end is not None else None,
        )
        for cost, start, end in rows.all()
    ]
