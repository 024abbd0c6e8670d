"""Paired statistics of a finished run: pass rates, McNemar's exact test and a bootstrap interval.

Everything is computed on complete pairs only (both lanes `passed` or `failed`), so an errored or
unfinished lane never counts as a loss for either side, and on valid pairs only (`bot.domain.integrity`:
CSB's curation rules), unless the caller asks what the figures would be with the invalid ones counted.
Differences are always MCP minus baseline.
Pure (numpy draws the bootstrap): the bootstrap is seeded, so a report drawn twice reads the same.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

from bot.domain.integrity import Invalidity, pair_invalidity
from bot.domain.outcome import LaneStatus
from bot.domain.reason import LaneReason
from bot.domain.states import SCORED_LANE_STATES
from bot.domain.verdict import LaneVerdict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_SCORED = SCORED_LANE_STATES
_Num = TypeVar("_Num", int, float)


@dataclass(frozen=True)
class LaneResult:
    """One lane's outcome with the usage Harbor reported in `agent_result` (None: not reported)."""

    status: LaneStatus
    reward: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    reason: LaneReason | None = None  # why the lane ended so (exception, Harbor's exit), as stored
    verdict: LaneVerdict | None = None  # CSB's verdicts, stored when the lane ended (None: no trial)

    @property
    def scored(self) -> bool:
        return self.status in _SCORED

    @property
    def passed(self) -> bool:
        return self.status is LaneStatus.PASSED

    @property
    def score(self) -> float:
        """The reward statistics use; CSB counts a missing reward as 0."""
        return self.reward or 0.0


class PairKind(StrEnum):
    """Where a pair goes in the report, in report order (the two agreeing kinds share a group)."""

    MCP_ONLY = "mcp_only"
    BASELINE_ONLY = "baseline_only"
    BOTH_PASS = "both_pass"
    BOTH_FAIL = "both_fail"
    INVALID = "invalid"  # complete, but not a result by CSB's curation rules
    INCOMPLETE = "incomplete"


@dataclass(frozen=True)
class PairOutcome:
    task_id: str
    suite: str
    baseline: LaneResult
    mcp: LaneResult

    @property
    def complete(self) -> bool:
        return self.baseline.scored and self.mcp.scored

    @property
    def invalid(self) -> tuple[Invalidity, ...]:
        """The curation rules this pair breaks (empty: a valid pair)."""
        return pair_invalidity(self.baseline.verdict, self.mcp.verdict)

    @property
    def counted(self) -> bool:
        """Whether the paired statistics count this pair: complete, and valid."""
        return self.complete and not self.invalid

    @property
    def kind(self) -> PairKind:
        if not self.complete:
            return PairKind.INCOMPLETE
        if self.invalid:
            return PairKind.INVALID
        return _agreement(self)


@dataclass(frozen=True)
class LaneTotals:
    """One lane over the scored results: `n` scored, `k` passed; usage sums are None when none reported."""

    n: int
    k: int
    mean_reward: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None

    @property
    def rate(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class PairedSummary:
    """Statistics on the `n` counted pairs; `excluded` pairs were errored or unfinished, `invalid` ones
    complete but not results by CSB's curation rules (0 when they were counted, `curated=False`)."""

    n: int
    excluded: int
    baseline: LaneTotals
    mcp: LaneTotals
    both_pass: int
    mcp_only: int
    baseline_only: int
    both_fail: int
    p_value: float
    mean_diff: float | None
    ci: tuple[float, float] | None
    invalid: int = 0

    @property
    def diff_pts(self) -> float | None:
        """MCP pass rate minus baseline pass rate, in percentage points."""
        return 100 * (self.mcp.k - self.baseline.k) / self.n if self.n else None


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar test: a binomial(b + c, 1/2) test on the discordant counts.

    Summed in integers and divided once, so it stays exact for any run size the bot will see.
    """
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    p: float = 2 * tail / 2**n  # int ** int is typed Any: a negative power would be a float
    return min(1.0, p)


def bootstrap_mean_diff_ci(
    diffs: Sequence[float], *, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile 95 % interval of the mean, from `resamples` seeded resamples; None without data.

    The resamples are exactly those of `random.Random(seed).choices(diffs, k=n)`, drawn `resamples`
    times, and each mean is summed left to right as `sum()` does: numpy draws the same Mersenne Twister
    stream (its state copied from `random.Random(seed)`) in one call, some 30 times faster, so a
    264-task report's intervals take milliseconds and read as they always have.
    """
    return bootstrap_mean_diff_cis([diffs], resamples=resamples, seed=seed)[0]


def bootstrap_mean_diff_cis(
    groups: Sequence[Sequence[float]], *, resamples: int = 10_000, seed: int = 0
) -> list[tuple[float, float] | None]:
    """Each group's interval, exactly as `bootstrap_mean_diff_ci` gives it alone.

    Every group's resamples read the same seeded stream from its start (a group of `n` its first
    `resamples * n` values), so one draw as long as the largest group needs serves them all; groups of
    the same size pick the same positions, worked out once; and a group equal to one before it, value for
    value, is not resampled again. `/csb compare`'s two dozen groups (each suite of each lane, each lane,
    all pairs) cost about a fifth of drawing each alone.
    """
    longest = max((len(diffs) for diffs in groups), default=0)
    if not longest:
        return [None] * len(groups)
    import numpy as np  # here, not at the top: the records and formats above serve every bot at start

    keys: list[bytes | None] = []
    distinct: dict[bytes, npt.NDArray[np.float64]] = {}
    for diffs in groups:
        if not diffs:
            keys.append(None)
            continue
        values = np.asarray(diffs, dtype=np.float64)
        key = values.tobytes()  # bit for bit: 0.0 and -0.0 are not the same group
        distinct.setdefault(key, values)
        keys.append(key)
    sums = _resample_sums(list(distinct.values()), _python_random(seed, resamples * longest), resamples)
    found = {
        key: _percentile_interval(total / len(values))
        for (key, values), total in zip(distinct.items(), sums, strict=True)
    }
    return [None if key is None else found[key] for key in keys]


_BLOCK_ROWS = 500  # resamples worked through at once: their draws stay in the cache, not in memory


def _resample_sums(
    groups: list[npt.NDArray[np.float64]], uniforms: npt.NDArray[np.float64], resamples: int
) -> list[npt.NDArray[np.float64]]:
    """Each group's `resamples` resample sums. Resample `r` of a group of `n` picks `values[floor(u * n)]`
    for its `n` uniforms from `r * n` on, as `random.choices` does (`u * n` is never negative, so the
    integer cast is the floor), and adds them left to right as `sum()` does: the same float in every last
    bit. A group of whole numbers (a pass/fail reward's differences) adds them as integers, which is
    exact in any order, so in one call."""
    import numpy as np

    sums = [np.empty(resamples) for _ in groups]
    whole = [_as_whole(values) for values in groups]
    by_size: dict[int, list[int]] = {}
    for index, values in enumerate(groups):
        by_size.setdefault(len(values), []).append(index)
    for first in range(0, resamples, _BLOCK_ROWS):
        rows = min(_BLOCK_ROWS, resamples - first)
        for n, members in by_size.items():
            block = uniforms[first * n : (first + rows) * n].reshape(rows, n)
            positions = (block * float(n)).astype(np.intp)
            for index in members:
                numbers = whole[index]
                if numbers is not None:
                    sums[index][first : first + rows] = numbers[positions].sum(axis=1)
                    continue
                picked = groups[index][positions]
                part = np.zeros(rows)
                for column in range(n):
                    part += picked[:, column]
                sums[index][first : first + rows] = part
    return sums


def _as_whole(values: npt.NDArray[np.float64]) -> npt.NDArray[np.int64] | None:
    """The values as integers when each is one (and small enough for any sum of them to stay exact)."""
    import numpy as np

    if not np.all(np.abs(values) <= 2**20):
        return None
    numbers = values.astype(np.int64)
    return numbers if np.array_equal(numbers, values) else None


def _percentile_interval(means: npt.NDArray[np.float64]) -> tuple[float, float]:
    """The percentile 95 % interval of the resample means."""
    import numpy as np

    resamples = len(means)
    ordered = np.sort(means)
    return float(ordered[math.floor(0.025 * resamples)]), float(ordered[math.ceil(0.975 * resamples) - 1])


def _python_random(seed: int, count: int) -> npt.NDArray[np.float64]:
    """The first `count` values `random.Random(seed).random()` returns (both are MT19937's 53-bit doubles)."""
    import numpy as np

    state = random.Random(seed).getstate()[1]
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), int(state[624]), 0, 0.0))
    return twister.random_sample(count)


def lane_totals(results: Iterable[LaneResult]) -> LaneTotals:
    """Totals of one lane over its scored results (the rest are left out, as in the paired view)."""
    scored = [r for r in results if r.scored]
    return LaneTotals(
        n=len(scored),
        k=sum(1 for r in scored if r.passed),
        mean_reward=_mean([r.score for r in scored]),
        input_tokens=_sum_reported([r.input_tokens for r in scored]),
        output_tokens=_sum_reported([r.output_tokens for r in scored]),
        cost_usd=_sum_reported([r.cost_usd for r in scored]),
    )


def summarize(pairs: Sequence[PairOutcome], *, curated: bool = True) -> PairedSummary:
    """The statistics on the counted pairs; with `curated=False`, on every complete pair (what the
    headline would be with the invalid pairs counted)."""
    whole = [p for p in pairs if p.complete]
    complete = [p for p in whole if p.counted] if curated else whole
    kinds = [p.kind if curated else _agreement(p) for p in complete]
    diffs = [p.mcp.score - p.baseline.score for p in complete]
    mcp_only = kinds.count(PairKind.MCP_ONLY)
    baseline_only = kinds.count(PairKind.BASELINE_ONLY)
    return PairedSummary(
        n=len(complete),
        excluded=len(pairs) - len(whole),
        invalid=len(whole) - len(complete),
        baseline=lane_totals(p.baseline for p in complete),
        mcp=lane_totals(p.mcp for p in complete),
        both_pass=kinds.count(PairKind.BOTH_PASS),
        mcp_only=mcp_only,
        baseline_only=baseline_only,
        both_fail=kinds.count(PairKind.BOTH_FAIL),
        p_value=mcnemar_exact_p(baseline_only, mcp_only),
        mean_diff=_mean(diffs),
        ci=bootstrap_mean_diff_ci(diffs),
    )


def _agreement(pair: PairOutcome) -> PairKind:
    """A complete pair's kind by its lanes alone, valid or not."""
    if pair.baseline.passed == pair.mcp.passed:
        return PairKind.BOTH_PASS if pair.mcp.passed else PairKind.BOTH_FAIL
    return PairKind.MCP_ONLY if pair.mcp.passed else PairKind.BASELINE_ONLY


def by_suite(pairs: Iterable[PairOutcome]) -> dict[str, list[PairOutcome]]:
    """Pairs grouped by suite key, suites in name order, pairs in their given order."""
    groups: dict[str, list[PairOutcome]] = {}
    for pair in pairs:
        groups.setdefault(pair.suite, []).append(pair)
    return dict(sorted(groups.items()))


def summarize_by_suite(pairs: Sequence[PairOutcome]) -> dict[str, PairedSummary]:
    return {suite: summarize(group) for suite, group in by_suite(pairs).items()}


_REPORT_RANK = {
    PairKind.MCP_ONLY: 0,
    PairKind.BASELINE_ONLY: 1,
    PairKind.BOTH_PASS: 2,
    PairKind.BOTH_FAIL: 2,
    PairKind.INVALID: 3,
    PairKind.INCOMPLETE: 4,
}


def order_for_report(pairs: Iterable[PairOutcome]) -> list[PairOutcome]:
    """MCP-only wins, regressions, agreeing pairs, invalid, then errored or incomplete; run order within."""
    return sorted(pairs, key=lambda p: _REPORT_RANK[p.kind])


def fmt_rate(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f} %)" if n else f"{k}/{n} (n/a)"


def fmt_signed(value: float, digits: int) -> str:
    """Always signed, and never `-0.0`: a difference that rounds to zero reads `+0.0`."""
    rounded = round(value, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{rounded:+.{digits}f}"


def fmt_pts(diff: float) -> str:
    return f"{fmt_signed(diff, 1)} pts"


def fmt_p(p: float) -> str:
    """Three significant digits; `g` switches to an exponent below 1e-4 (`p = 1.23e-05`)."""
    return f"p = {p:#.3g}"


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _sum_reported(values: Sequence[_Num | None]) -> _Num | None:
    reported = [v for v in values if v is not None]
    return sum(reported) if reported else None
