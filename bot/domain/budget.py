"""Monthly budgets: a category's (and optionally a model's) spend against its warn and block lines.

CSB's Daytona cost guard (`daytona_cost_guard.py`, `configs/daytona_cost_policy.json`) sets the shape:
a monthly budget in dollars, a warning past `warn_fraction` of it and a block past `block_fraction`
(0.5 and 1.0 by default), each a strict `>` of the projected spend (the month so far plus the launch's
estimate). The bot applies the same rule to what its lanes recorded (`cost_usd`) in the UTC month.

Pure: the store sums the month (`bot/store/spend.py`), the views word the lines.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

# A dollar amount from the config: a number (never a string that looks like one), finite, not negative.
Dollars = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
Fraction = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]


class Budget(BaseModel):
    """`[policy.<category>.budget]`: the category's monthly budget, its lines, and per-model budgets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    monthly_usd: Dollars
    warn_fraction: Fraction = 0.5
    block_fraction: Fraction = 1.0
    # `[policy.<category>.budget.models]`: "<model>" = dollars, a budget of its own within the category.
    models: dict[str, Dollars] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _warn_before_block(self) -> Budget:
        if self.warn_fraction > self.block_fraction:
            raise ValueError(
                f"warn_fraction ({self.warn_fraction}) is above block_fraction ({self.block_fraction})"
            )
        return self


class Level(StrEnum):
    OK = "ok"
    WARN = "warn"
    BLOCK = "block"


class Scope(StrEnum):
    CATEGORY = "category"
    MODEL = "model"


class BudgetLine(BaseModel):
    """One budget measured: what the month has spent, what this run is expected to add, and the lines."""

    model_config = ConfigDict(frozen=True)

    scope: Scope
    name: str  # the category, or the model
    month: str  # YYYY-MM, UTC
    budget_usd: float
    spent_usd: float
    estimate_usd: float  # this run's estimate (its median); 0 without history
    warn_usd: float
    block_usd: float

    @property
    def projected_usd(self) -> float:
        return self.spent_usd + self.estimate_usd

    @property
    def level(self) -> Level:
        """CSB's rule: strictly above a line."""
        if self.projected_usd > self.block_usd:
            return Level.BLOCK
        if self.projected_usd > self.warn_usd:
            return Level.WARN
        return Level.OK

    @property
    def crossed(self) -> bool:
        """What has been spent (not projected) is past the block line: a running run drains."""
        return self.spent_usd > self.block_usd


class BudgetCheck(BaseModel):
    """Every budget a request falls under, measured; empty when its category has none."""

    model_config = ConfigDict(frozen=True)

    lines: tuple[BudgetLine, ...] = ()

    @property
    def blocked(self) -> bool:
        return any(line.level is Level.BLOCK for line in self.lines)

    @property
    def warned(self) -> bool:
        return any(line.level is Level.WARN for line in self.lines)


def month_of(at: datetime) -> str:
    """The UTC month `at` falls in, as `YYYY-MM`."""
    return at.astimezone(UTC).strftime("%Y-%m")


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """The first instant of `YYYY-MM` (UTC) and of the month after; ValueError for another shape."""
    start = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
    end = (
        start.replace(year=start.year + 1, month=1)
        if start.month == 12
        else start.replace(month=start.month + 1)
    )
    return start, end


def budget_lines(
    budget: Budget,
    *,
    category: str,
    model: str,
    month: str,
    category_spent: float,
    model_spent: float,
    estimate_usd: float,
) -> BudgetCheck:
    """The category's line, and the model's when the budget names that model."""
    lines = [_line(budget, Scope.CATEGORY, category, month, budget.monthly_usd, category_spent, estimate_usd)]
    if model in budget.models:
        lines.append(
            _line(budget, Scope.MODEL, model, month, budget.models[model], model_spent, estimate_usd)
        )
    return BudgetCheck(lines=tuple(lines))


def _line(
    budget: Budget, scope: Scope, name: str, month: str, dollars: float, spent: float, estimate: float
) -> BudgetLine:
    return BudgetLine(
        scope=scope,
        name=name,
        month=month,
        budget_usd=dollars,
        spent_usd=spent,
        estimate_usd=estimate,
        warn_usd=dollars * budget.warn_fraction,
        block_usd=dollars * budget.block_fraction,
    )
