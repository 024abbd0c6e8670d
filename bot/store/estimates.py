"""The history an estimate rests on: recent finished lanes per (suite, config), of the same model first.

Each group's part walks `ix_lanes_history` (suite, config, model, finished_at, then the columns the
query reads, so the lanes table itself is never visited; a lane keeps its run's model for this) from
the newest lane back and stops after `HISTORY_SAMPLE` lanes, so its cost does not grow with the table.
The parts of every group go to the database as one `UNION ALL` (one round trip, however many groups),
built once per number of groups, and a lane's duration is worked out there, not parsed from two
timestamps per row in Python. Groups with no lane of that model fall back to their suite's recent lanes
of any config or model (`ix_lanes_suite_finished`, covering too), in a second query. A 528-lane request
over 100,000 finished lanes is answered within the 100 ms goal (`bench/estimate.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Executable, Select, bindparam, literal, select, union_all
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.expression import ColumnElement
from sqlmodel import col

from bot.domain.estimate import HISTORY_SAMPLE, Basis, GroupHistory, LaneSample
from bot.domain.states import COMPLETED_LANE_STATES
from bot.store.elapsed import seconds_between
from bot.store.models import Lane


async def lane_history(
    session: AsyncSession, model: str, groups: Iterable[tuple[str, str]], limit: int = HISTORY_SAMPLE
) -> dict[tuple[str, str], GroupHistory]:
    """Per (suite, config) group: the same suite, config and model, else the same suite, else none."""
    wanted = sorted(set(groups))
    params: dict[str, Any] = {"model": model}
    for index, (suite, config) in enumerate(wanted):
        params |= {f"suite_{index}": suite, f"config_{index}": config}
    exact = await _samples(session, _query(len(wanted), limit, by_suite_only=False), params, len(wanted))
    lacking = sorted({suite for (suite, _), found in zip(wanted, exact, strict=True) if not found})
    suite_params = {f"suite_{index}": suite for index, suite in enumerate(lacking)}
    query = _query(len(lacking), limit, by_suite_only=True)
    by_suite = dict(zip(lacking, await _samples(session, query, suite_params, len(lacking)), strict=True))
    history: dict[tuple[str, str], GroupHistory] = {}
    for (suite, config), samples in zip(wanted, exact, strict=True):
        if samples:
            history[(suite, config)] = GroupHistory(Basis.EXACT, samples)
        elif by_suite.get(suite):
            history[(suite, config)] = GroupHistory(Basis.SUITE, by_suite[suite])
        else:
            history[(suite, config)] = GroupHistory(Basis.NONE)
    return history


async def _samples(
    session: AsyncSession, query: Executable | None, params: dict[str, Any], parts: int
) -> list[list[LaneSample]]:
    """Each part's samples, in the parts' order."""
    found: list[list[LaneSample]] = [[] for _ in range(parts)]
    if query is None:
        return found
    for part, cost, seconds in (await session.execute(query, params)).all():
        # To the millisecond: SQLite's julianday arithmetic is a float of days (120 s reads 119.99999).
        found[part].append(
            LaneSample(cost_usd=cost, seconds=None if seconds is None else round(float(seconds), 3))
        )
    return found


@functools.lru_cache(maxsize=128)
def _query(parts: int, limit: int, *, by_suite_only: bool) -> Executable | None:
    """The UNION ALL of `parts` parts, built once per shape (building it costs more than running it):
    part i is `suite_i` and `config_i` of `model`, or with `by_suite_only` the suite `suite_i` alone."""
    if not parts:
        return None
    selects = []
    for index in range(parts):
        where = [col(Lane.suite) == bindparam(f"suite_{index}")]
        if not by_suite_only:
            where += [col(Lane.config) == bindparam(f"config_{index}"), col(Lane.model) == bindparam("model")]
        selects.append(_newest(index, where, limit))
    return selects[0] if parts == 1 else union_all(*selects)


def _newest(index: int, where: Sequence[ColumnElement[bool]], limit: int) -> Select[Any]:
    """One part: its newest lanes, wrapped so a UNION ALL may hold its own ORDER BY and LIMIT (SQLite)."""
    newest = (
        select(
            literal(index).label("part"),
            col(Lane.cost_usd).label("cost"),
            seconds_between(col(Lane.started_at), col(Lane.finished_at)).label("seconds"),
        )
        .where(*where, col(Lane.finished_at).is_not(None), col(Lane.state).in_(list(COMPLETED_LANE_STATES)))
        .order_by(col(Lane.finished_at).desc())
        .limit(limit)
        .subquery()
    )
    return select(newest.c.part, newest.c.cost, newest.c.seconds)
