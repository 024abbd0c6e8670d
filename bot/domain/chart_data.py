"""The numbers the charts are drawn from, computed once so the chart, its alt text and its CSV agree.

- `suite_rates`: per suite (and all suites), baseline and MCP pass rates on the counted pairs with
  Wilson 95 % intervals, and the paired difference (MCP − baseline, Newcombe's interval), on the same
  counted pairs as the report's statistics (`bot.domain.stats.summarize`).
- `reward_points`: each counted pair's (baseline, MCP) reward, identical points merged with a count.
- `comparison_rows`: per lane slot and suite, A − B in points with its interval and the regressions.
Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain.compare import OVERALL, Comparison
from bot.domain.intervals import paired_diff_interval, wilson_interval
from bot.domain.stats import PairKind, PairOutcome, by_suite

ALL_SUITES = "all suites"


@dataclass(frozen=True)
class SuiteRate:
    suite: str
    n: int
    baseline_k: int
    mcp_k: int
    baseline_ci: tuple[float, float]  # Wilson, as rates in [0, 1]
    mcp_ci: tuple[float, float]
    diff_pts: float  # MCP − baseline
    diff_ci: tuple[float, float]  # in points

    @property
    def baseline_rate(self) -> float:
        return self.baseline_k / self.n

    @property
    def mcp_rate(self) -> float:
        return self.mcp_k / self.n


@dataclass(frozen=True)
class RewardPoint:
    baseline: float
    mcp: float
    count: int
    disagree: bool  # one lane passed, the other failed


@dataclass(frozen=True)
class ComparisonRow:
    slot: str
    suite: str
    n: int
    diff_pts: float  # A − B
    diff_ci: tuple[float, float]
    regressions: int
    fixes: int


def suite_rates(pairs: Sequence[PairOutcome]) -> list[SuiteRate]:
    """One row per suite with counted pairs, in name order, then all suites when there are several."""
    groups = list(by_suite(pairs).items())
    if len(groups) > 1:
        groups.append((ALL_SUITES, list(pairs)))
    return [row for suite, group in groups if (row := _rate(suite, group)) is not None]


def reward_points(pairs: Sequence[PairOutcome]) -> list[RewardPoint]:
    counted = [p for p in pairs if p.counted]
    merged = Counter((p.baseline.score, p.mcp.score, p.baseline.passed != p.mcp.passed) for p in counted)
    return [RewardPoint(b, m, count, disagree) for (b, m, disagree), count in sorted(merged.items())]


def comparison_rows(result: Comparison) -> list[ComparisonRow]:
    rows = []
    for slot, groups in result.by_slot.items():
        for suite, stats in groups.items():
            if stats.n and stats.diff_ci is not None and stats.diff_pts is not None:
                if suite == OVERALL and len(groups) == 2:  # one suite: its row is the overall one
                    continue
                rows.append(
                    ComparisonRow(
                        slot, suite, stats.n, stats.diff_pts, stats.diff_ci, stats.regressions, stats.fixes
                    )
                )
    return rows


def _rate(suite: str, pairs: Sequence[PairOutcome]) -> SuiteRate | None:
    """The report's counts on the counted pairs (`summarize` without its bootstrap, which no chart shows)."""
    kinds = Counter(p.kind for p in pairs if p.counted)
    both, mcp_only, base_only = (
        kinds[PairKind.BOTH_PASS],
        kinds[PairKind.MCP_ONLY],
        kinds[PairKind.BASELINE_ONLY],
    )
    n = sum(kinds.values())
    base_ci, mcp_ci = wilson_interval(both + base_only, n), wilson_interval(both + mcp_only, n)
    diff = paired_diff_interval(both, mcp_only, base_only, kinds[PairKind.BOTH_FAIL])
    if base_ci is None or mcp_ci is None or diff is None:
        return None
    return SuiteRate(
        suite=suite,
        n=n,
        baseline_k=both + base_only,
        mcp_k=both + mcp_only,
        baseline_ci=base_ci,
        mcp_ci=mcp_ci,
        diff_pts=100 * (mcp_only - base_only) / n,
        diff_ci=(100 * diff[0], 100 * diff[1]),
    )
