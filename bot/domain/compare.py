"""Compare two sets of results (two runs, or a run and CSB's official MANIFEST), task by task.

The rules (CSB `compare_configs.py`, extended as `OPERATIONS.md` §4 and §10 say):
- Tasks are paired by the MANIFEST's task key (`bot.domain.manifest_names`), not by compare_configs.py's
  key, which keeps an `mcp_` copy prefix and so never pairs a current MCP lane with its baseline.
- A result is paired with the other side's result of the same lane: the same config name by default
  (`LaneChoice.CONFIG`), or the same role (`baseline`, `mcp`, or both) when the caller says so, which is
  how two runs of different configs compare.
- Only valid results count (a MANIFEST `passed` or `failed` that breaks no curation rule,
  `bot.domain.integrity`); a pair with an errored or invalid side is left out of the statistics and
  listed with why. Tasks one side lacks are listed, never silently dropped.
- Differences are A minus B: B is the reference (`official`, or the older run), so B passed and A
  failed is a regression.
Pure; the statistics are the paired report's (`bot.domain.stats`) and `bot.domain.intervals`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from bot.domain.intervals import paired_diff_interval
from bot.domain.manifest_names import manifest_task_key
from bot.domain.spec import LaneRole
from bot.domain.stats import bootstrap_mean_diff_ci, bootstrap_mean_diff_cis, mcnemar_exact_p
from bot.domain.verdict import ManifestStatus

OVERALL = "overall"
RESAMPLES = 10_000


class LaneChoice(StrEnum):
    """Which lanes are paired: the same config name on both sides, or lanes of a role."""

    CONFIG = "config"
    BASELINE = "baseline"
    MCP = "mcp"
    BOTH = "both"


@dataclass(frozen=True)
class TaskResult:
    """One lane's result on one task, as its side recorded it; `invalid` names the curation rule it
    breaks (None: a valid result, if its status is `passed` or `failed`)."""

    task: str
    suite: str
    config: str
    role: LaneRole
    status: ManifestStatus
    reward: float | None = None
    cost_usd: float | None = None
    invalid: str | None = None

    @property
    def counts(self) -> bool:
        return self.status is not ManifestStatus.ERRORED and self.invalid is None

    @property
    def passed(self) -> bool:
        return self.status is ManifestStatus.PASSED

    @property
    def score(self) -> float:
        return self.reward or 0.0


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a run (`label` its number) or the official MANIFEST."""

    label: str
    results: tuple[TaskResult, ...]
    model: str | None = None
    agent: str | None = None
    suite_file: str | None = None
    spec_hash: str | None = None

    @property
    def configs(self) -> str:
        return ", ".join(sorted({r.config for r in self.results})) or "none"

    @property
    def suites(self) -> frozenset[str]:
        return frozenset(r.suite for r in self.results)


@dataclass(frozen=True)
class Pair:
    slot: str  # the config name, or the role, both sides' results are paired on
    key: str  # the MANIFEST task key
    a: TaskResult
    b: TaskResult

    @property
    def counted(self) -> bool:
        return self.a.counts and self.b.counts

    @property
    def suite(self) -> str:
        return self.a.suite


@dataclass(frozen=True)
class GroupStats:
    """A − B on `n` counted pairs: `fixes` B failed and A passed, `regressions` B passed and A failed."""

    n: int
    k_a: int
    k_b: int
    fixes: int
    regressions: int
    p_value: float
    diff_ci: tuple[float, float] | None  # in points
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    mean_ci: tuple[float, float] | None
    cost_a: float | None  # mean cost per task where reported
    cost_b: float | None

    @property
    def diff_pts(self) -> float | None:
        return 100 * (self.k_a - self.k_b) / self.n if self.n else None

    @property
    def rate_a(self) -> float | None:
        return self.k_a / self.n if self.n else None

    @property
    def rate_b(self) -> float | None:
        return self.k_b / self.n if self.n else None


class FlipKind(StrEnum):
    REGRESSION = "regression"  # B passed, A failed
    FIX = "fix"  # B failed, A passed
    NEW_ERROR = "new_error"  # A errored (MANIFEST rule) where B has a valid result


@dataclass(frozen=True)
class Flip:
    kind: FlipKind
    pair: Pair


@dataclass(frozen=True)
class Difference:
    """A header field the two sides differ on (None: the side does not record it)."""

    name: str
    a: str | None
    b: str | None


@dataclass(frozen=True)
class Comparison:
    a: Side
    b: Side
    lanes: LaneChoice
    pairs: tuple[Pair, ...]
    overall: GroupStats
    by_slot: dict[str, dict[str, GroupStats]]  # slot -> suite (and OVERALL) -> stats
    flips: tuple[Flip, ...]
    only_a: tuple[tuple[str, str], ...]  # (slot, task key) only A has
    only_b: tuple[tuple[str, str], ...]
    differs: tuple[Difference, ...] = field(default=())

    @property
    def excluded(self) -> tuple[Pair, ...]:
        """Pairs left out of the statistics: a side errored, or broke a curation rule."""
        return tuple(p for p in self.pairs if not p.counted)

    def of_kind(self, kind: FlipKind) -> tuple[Pair, ...]:
        return tuple(f.pair for f in self.flips if f.kind is kind)

    def significant_regression(self, alpha: float) -> bool:
        """More regressions than fixes, and McNemar's exact test rejects equal rates at `alpha`."""
        stats = self.overall
        return stats.regressions > stats.fixes and stats.p_value < alpha


def compare(
    a: Side, b: Side, lanes: LaneChoice = LaneChoice.CONFIG, *, resamples: int = RESAMPLES
) -> Comparison:
    """Pair `a` with `b` and compute the statistics, per lane slot and suite, and overall. Each group's
    bootstrap is the one `group_stats` draws, all of them drawn together (`bootstrap_mean_diff_cis`)."""
    left, right = _keyed(a.results, lanes), _keyed(b.results, lanes)
    shared = [k for k in left if k in right]
    pairs = tuple(Pair(slot, key, left[(slot, key)], right[(slot, key)]) for slot, key in shared)
    grouped: dict[str, dict[str, Sequence[Pair]]] = {}
    for slot in dict.fromkeys(p.slot for p in pairs):
        in_slot = [p for p in pairs if p.slot == slot]
        grouped[slot] = {**_by_suite(in_slot), OVERALL: in_slot}
    every = [group for groups in grouped.values() for group in groups.values()] + [pairs]
    stats = _with_intervals([group_stats(group, resamples=0) for group in every], every, resamples)
    by_slot: dict[str, dict[str, GroupStats]] = {}
    at = iter(stats)
    for slot, groups in grouped.items():
        by_slot[slot] = {name: next(at) for name in groups}
    return Comparison(
        a=a,
        b=b,
        lanes=lanes,
        pairs=pairs,
        overall=next(at),
        by_slot=by_slot,
        flips=tuple(flips(pairs)),
        only_a=tuple(k for k in left if k not in right),
        only_b=tuple(k for k in right if k not in left),
        differs=tuple(differences(a, b)),
    )


def _with_intervals(
    stats: list[GroupStats], groups: Sequence[Sequence[Pair]], resamples: int
) -> list[GroupStats]:
    """The groups' statistics with their bootstrap intervals of the mean reward difference."""
    if not resamples:
        return stats
    intervals = bootstrap_mean_diff_cis([_diffs(group) for group in groups], resamples=resamples)
    return [replace(s, mean_ci=ci) for s, ci in zip(stats, intervals, strict=True)]


def _diffs(pairs: Sequence[Pair]) -> list[float]:
    return [p.a.score - p.b.score for p in pairs if p.counted]


def group_stats(pairs: Sequence[Pair], resamples: int = RESAMPLES) -> GroupStats:
    counted = [p for p in pairs if p.counted]
    n = len(counted)
    both = sum(1 for p in counted if p.a.passed and p.b.passed)
    fixes = sum(1 for p in counted if p.a.passed and not p.b.passed)
    regressions = sum(1 for p in counted if p.b.passed and not p.a.passed)
    ci = paired_diff_interval(both, fixes, regressions, n - both - fixes - regressions)
    diffs = _diffs(counted)
    return GroupStats(
        n=n,
        k_a=both + fixes,
        k_b=both + regressions,
        fixes=fixes,
        regressions=regressions,
        p_value=mcnemar_exact_p(fixes, regressions),
        diff_ci=(100 * ci[0], 100 * ci[1]) if ci else None,
        mean_a=_mean([p.a.score for p in counted]),
        mean_b=_mean([p.b.score for p in counted]),
        mean_diff=_mean(diffs),
        mean_ci=bootstrap_mean_diff_ci(diffs, resamples=resamples) if resamples else None,
        cost_a=_mean([p.a.cost_usd for p in counted if p.a.cost_usd is not None]),
        cost_b=_mean([p.b.cost_usd for p in counted if p.b.cost_usd is not None]),
    )


def flips(pairs: Iterable[Pair]) -> list[Flip]:
    """Regressions first, then fixes, then errors that appeared; pair order within each."""
    found = []
    for pair in pairs:
        if pair.counted and pair.a.passed != pair.b.passed:
            found.append(Flip(FlipKind.FIX if pair.a.passed else FlipKind.REGRESSION, pair))
        elif pair.a.status is ManifestStatus.ERRORED and pair.b.counts:
            found.append(Flip(FlipKind.NEW_ERROR, pair))
    rank = {FlipKind.REGRESSION: 0, FlipKind.FIX: 1, FlipKind.NEW_ERROR: 2}
    return sorted(found, key=lambda f: rank[f.kind])


def differences(a: Side, b: Side) -> list[Difference]:
    """What differs between the sides, in the header's order: model, config, agent, suite file, spec hash."""
    fields = (
        ("model", a.model, b.model),
        ("config", a.configs, b.configs),
        ("agent", a.agent, b.agent),
        ("suite file", a.suite_file, b.suite_file),
        ("spec hash", a.spec_hash, b.spec_hash),
    )
    return [Difference(name, x, y) for name, x, y in fields if x != y]


def slot_of(result: TaskResult, lanes: LaneChoice) -> str | None:
    """The slot a result is paired in, or None when the choice leaves its lane out."""
    if lanes is LaneChoice.CONFIG:
        return result.config
    if lanes is LaneChoice.BOTH or lanes.value == result.role.value:
        return result.role.value
    return None


def _keyed(results: Iterable[TaskResult], lanes: LaneChoice) -> dict[tuple[str, str], TaskResult]:
    """Results by (slot, task key); a later result of the same key replaces an earlier one."""
    keyed: dict[tuple[str, str], TaskResult] = {}
    for result in results:
        slot = slot_of(result, lanes)
        if slot is not None:
            keyed[(slot, manifest_task_key(result.task))] = result
    return keyed


def _by_suite(pairs: Iterable[Pair]) -> dict[str, list[Pair]]:
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(pair.suite, []).append(pair)
    return dict(sorted(groups.items()))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
