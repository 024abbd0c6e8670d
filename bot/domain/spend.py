"""`/csb spend [month]`: a month's recorded lane cost, summed by category, model, suite and config.

Pure: the store hands in one row per (category, model, suite, config) (`bot/store/spend.py`); this
module sums them along each dimension, biggest first, and the views word and draw them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.domain.budget import month_of
from bot.domain.errors import UserInputError

DIMENSIONS = ("category", "model", "suite", "config")
_MONTH = re.compile(r"(\d{4})-(\d{2})")


@dataclass(frozen=True)
class SpendRow:
    category: str
    model: str
    suite: str
    config: str
    lanes: int  # lanes that finished in the month
    priced: int  # of which reported a cost
    cost_usd: float


@dataclass(frozen=True)
class SpendItem:
    """One value of a dimension (a model, say) and what its lanes cost."""

    name: str
    lanes: int
    priced: int
    cost_usd: float


@dataclass(frozen=True)
class MonthSpend:
    month: str
    lanes: int
    priced: int
    cost_usd: float
    by: dict[str, tuple[SpendItem, ...]]  # per dimension of DIMENSIONS, biggest cost first

    @property
    def unpriced(self) -> int:
        return self.lanes - self.priced


def parse_month(text: str, now: datetime, usage: str) -> str:
    """`YYYY-MM`, or this UTC month for nothing; anything else is a one-line error with the usage."""
    words = text.split()
    if not words:
        return month_of(now)
    if len(words) > 1:
        raise UserInputError(f"expected one month as YYYY-MM, got {len(words)} words", hint=usage)
    match = _MONTH.fullmatch(words[0])
    if match is None or not 1 <= int(match.group(2)) <= 12 or int(match.group(1)) < 1:
        raise UserInputError(
            f"`{words[0][:20]}` is not a month: write it as YYYY-MM, e.g. 2026-03", hint=usage
        )
    return words[0]


def month_spend(month: str, rows: Sequence[SpendRow]) -> MonthSpend:
    by = {dimension: _sum_by(rows, dimension) for dimension in DIMENSIONS}
    return MonthSpend(
        month=month,
        lanes=sum(row.lanes for row in rows),
        priced=sum(row.priced for row in rows),
        cost_usd=sum(row.cost_usd for row in rows),
        by=by,
    )


def _sum_by(rows: Sequence[SpendRow], dimension: str) -> tuple[SpendItem, ...]:
    totals: dict[str, list[float]] = {}
    for row in rows:
        total = totals.setdefault(getattr(row, dimension), [0, 0, 0.0])
        total[0] += row.lanes
        total[1] += row.priced
        total[2] += row.cost_usd
    items = [SpendItem(name, int(t[0]), int(t[1]), t[2]) for name, t in totals.items()]
    return tuple(sorted(items, key=lambda item: (-item.cost_usd, item.name)))
