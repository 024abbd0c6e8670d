"""What a run will cost against what its month may spend: the card's estimate and budget, and `/csb spend`.

The estimate rests on the lanes the bot already ran (`bot/domain/estimate.py`, `bot/store/estimates.py`);
the budget is the category's `[policy.<category>.budget]` (`bot/domain/budget.py`), measured against the
month's recorded spend (`bot/store/spend.py`) plus the estimate.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from bot.domain.budget import Budget, BudgetCheck, budget_lines, month_bounds, month_of
from bot.domain.clock import Clock
from bot.domain.command_line import SPEND_USAGE
from bot.domain.estimate import RunEstimate, estimate_run
from bot.domain.policy import PolicyConfig
from bot.domain.spec import Category, RunSpec
from bot.domain.spend import MonthSpend, month_spend, parse_month
from bot.store import estimates, spend
from bot.store.db import Store


class SpendChecks(BaseModel):
    """The estimate and the budget lines a card shows (kept in the request's checks)."""

    model_config = ConfigDict(frozen=True)

    estimate: RunEstimate
    budget: BudgetCheck = BudgetCheck()


@dataclass(frozen=True)
class _Spent:
    budget: Budget
    month: str
    category: float
    model: float


class SpendService:
    def __init__(self, store: Store, policy: PolicyConfig, clock: Clock) -> None:
        self._store = store
        self._policy = policy
        self._clock = clock

    async def assess(self, spec: RunSpec) -> SpendChecks:
        """The run's estimate from finished lanes, and its category's budget with that estimate added.

        The history and the month's spend are read side by side (two sessions): the card waits for the
        slower of the two, not for both."""
        estimate, spent = await asyncio.gather(self.estimate(spec), self._spent(spec))
        return SpendChecks(estimate=estimate, budget=self._lines(spec, estimate, spent))

    async def estimate(self, spec: RunSpec) -> RunEstimate:
        groups = Counter((task.suite, lane.config) for task in spec.tasks for lane in spec.lanes)
        async with self._store.read() as session:
            history = await estimates.lane_history(session, spec.params.model, sorted(groups))
        return estimate_run(groups, history, tasks=len(spec.tasks), parallel=spec.parallel)

    async def budget(self, spec: RunSpec, estimate: RunEstimate | None) -> BudgetCheck:
        """The budget lines now: the month's recorded spend so far plus `estimate` (its median cost)."""
        return self._lines(spec, estimate, await self._spent(spec))

    async def _spent(self, spec: RunSpec) -> _Spent | None:
        """The month's spend of the spec's category (and of its model, when the budget names it); None
        without a budget."""
        category, model = spec.params.category, spec.params.model
        budget = self._policy.for_category(category).budget
        if budget is None:
            return None
        month = month_of(self._clock.now())
        start, end = month_bounds(month)
        async with self._store.read() as session:
            in_category = await spend.month_spent(session, start, end, category=category.value)
            of_model = (
                await spend.month_spent(session, start, end, category=category.value, model=model)
                if model in budget.models
                else 0.0
            )
        return _Spent(budget, month, in_category, of_model)

    def _lines(self, spec: RunSpec, estimate: RunEstimate | None, spent: _Spent | None) -> BudgetCheck:
        if spent is None:
            return BudgetCheck()
        cost = estimate.cost_usd.median if estimate is not None and estimate.cost_usd is not None else 0.0
        return budget_lines(
            spent.budget,
            category=spec.params.category.value,
            model=spec.params.model,
            month=spent.month,
            category_spent=spent.category,
            model_spent=spent.model,
            estimate_usd=cost,
        )

    async def month(self, args: str) -> MonthSpend:
        """`/csb spend [month]`: the month's spend by category, model, suite and config."""
        month = parse_month(args, self._clock.now(), SPEND_USAGE)
        start, end = month_bounds(month)
        async with self._store.read() as session:
            rows = await spend.spend_rows(session, start, end)
        return month_spend(month, rows)

    def budgets(self) -> dict[str, float]:
        """Each category's monthly budget in dollars, for `/csb spend` to set the month against."""
        found = {c.value: self._policy.for_category(c).budget for c in Category}
        return {name: budget.monthly_usd for name, budget in found.items() if budget is not None}
