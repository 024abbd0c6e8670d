"""What a run will cost and how long it will take, from the lanes that already finished.

Per lane group of the request (a suite and a lane config), the history is the recent finished lanes of
the same suite, config and model; where there are none, of the same suite (any config or model); else
the group has no history and is left out of the figures (and counted, so the card can say so). Each
group's lane costs and durations give a median and a p10–p90 range (deciles, inclusive method), and
the run's figures are the sums over its lanes. A sum of p10s is not the p10 of the sum: the range says
what the run costs if every lane were as cheap (or as dear) as a tenth of the history, a bound the
approver can read, not a confidence interval.

Pure: the store hands in the samples (`bot/store/estimates.py`), the views word the result.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

HISTORY_SAMPLE = 200  # recent finished lanes per group: today's prices and agents, not last year's


class Basis(StrEnum):
    """Which history a figure rests on, best first."""

    EXACT = "exact"  # same suite, config and model
    SUITE = "suite"  # same suite, any config or model
    NONE = "none"  # no finished lane of the suite


@dataclass(frozen=True)
class LaneSample:
    """One finished lane: its recorded cost (None: not reported) and how long it ran (None: unknown)."""

    cost_usd: float | None
    seconds: float | None


@dataclass(frozen=True)
class GroupHistory:
    """The samples found for one lane group, and which history they come from."""

    basis: Basis
    samples: Sequence[LaneSample] = ()


class Spread(BaseModel):
    """A median with its p10–p90 range."""

    model_config = ConfigDict(frozen=True)

    median: float
    low: float  # p10
    high: float  # p90

    def times(self, factor: float) -> Spread:
        return Spread(median=self.median * factor, low=self.low * factor, high=self.high * factor)

    def plus(self, other: Spread) -> Spread:
        return Spread(
            median=self.median + other.median, low=self.low + other.low, high=self.high + other.high
        )


class RunEstimate(BaseModel):
    """The figures an approval card shows, stored with the request so the report compares with them."""

    model_config = ConfigDict(frozen=True)

    tasks: int
    lanes: int
    parallel: int
    basis: Basis  # the weakest basis any estimated lane rests on; NONE when no lane has history
    samples: int = 0  # finished lanes the figures rest on
    exact_lanes: int = 0  # lanes of the run estimated from the same suite, config and model
    lanes_without_history: int = 0
    cost_usd: Spread | None = None  # the whole run, over the lanes with a reported cost in history
    cost_per_task_usd: Spread | None = None
    lane_seconds: Spread | None = None  # summed over the lanes: the work, not the wall clock
    wall_seconds: Spread | None = None  # the work spread over the run's parallel slots

    @property
    def has_history(self) -> bool:
        return self.basis is not Basis.NONE


def spread(values: Sequence[float]) -> Spread | None:
    """Median and p10–p90 of `values` (inclusive deciles; one value is its own range); None when empty."""
    if not values:
        return None
    if len(values) == 1:
        return Spread(median=values[0], low=values[0], high=values[0])
    deciles = statistics.quantiles(values, n=10, method="inclusive")
    return Spread(median=statistics.median(values), low=deciles[0], high=deciles[-1])


def estimate_run(
    lanes_per_group: Mapping[tuple[str, str], int],
    history: Mapping[tuple[str, str], GroupHistory],
    *,
    tasks: int,
    parallel: int,
) -> RunEstimate:
    """The run's estimate from each (suite, config) group's lane count and its history."""
    cost: Spread | None = None
    work: Spread | None = None
    samples = 0
    exact = 0
    without = 0
    bases: set[Basis] = set()
    for group, count in lanes_per_group.items():
        found = history.get(group, GroupHistory(Basis.NONE))
        costs = spread([s.cost_usd for s in found.samples if s.cost_usd is not None])
        seconds = spread([s.seconds for s in found.samples if s.seconds is not None])
        if found.basis is Basis.NONE or (costs is None and seconds is None):
            without += count
            continue
        bases.add(found.basis)
        exact += count if found.basis is Basis.EXACT else 0
        samples += len(found.samples)
        if costs is not None:
            cost = _add(cost, costs.times(count))
        if seconds is not None:
            work = _add(work, seconds.times(count))
    lanes = sum(lanes_per_group.values())
    slots = max(1, min(parallel, lanes or 1))
    return RunEstimate(
        tasks=tasks,
        lanes=lanes,
        parallel=parallel,
        basis=_weakest(bases),
        samples=samples,
        exact_lanes=exact,
        lanes_without_history=without,
        cost_usd=cost,
        cost_per_task_usd=cost.times(1 / tasks) if cost is not None and tasks else None,
        lane_seconds=work,
        wall_seconds=work.times(1 / slots) if work is not None else None,
    )


def _add(total: Spread | None, part: Spread) -> Spread:
    return part if total is None else total.plus(part)


def _weakest(bases: set[Basis]) -> Basis:
    for basis in (Basis.SUITE, Basis.EXACT):
        if basis in bases:
            return basis
    return Basis.NONE
