"""Paired statistics against known values and brute force: McNemar, the bootstrap, the summaries."""

from __future__ import annotations

import math
import random
from itertools import product

import pytest

from bot.domain.outcome import LaneStatus
from bot.domain.stats import (
    LaneResult,
    PairKind,
    PairOutcome,
    bootstrap_mean_diff_ci,
    bootstrap_mean_diff_cis,
    fmt_p,
    fmt_pts,
    fmt_rate,
    fmt_signed,
    lane_totals,
    mcnemar_exact_p,
    order_for_report,
    summarize,
    summarize_by_suite,
)

P = LaneStatus.PASSED
F = LaneStatus.FAILED


def _lane(status: LaneStatus, reward: float | None = None) -> LaneResult:
    if reward is None and status in (P, F):
        reward = 1.0 if status is P else 0.0
    return LaneResult(status=status, reward=reward)


def _pair(task: str, baseline: LaneStatus, mcp: LaneStatus, suite: str = "csb_sdlc_fix") -> PairOutcome:
    return PairOutcome(task_id=task, suite=suite, baseline=_lane(baseline), mcp=_lane(mcp))


def _brute_force_p(b: int, c: int) -> float:
    """Two-sided exact binomial by definition: all outcomes no more likely than the one observed."""
    n = b + c
    probs = [math.comb(n, i) / 2**n for i in range(n + 1)]
    observed = probs[b]
    return min(1.0, sum(p for p in probs if p <= observed * (1 + 1e-12)))


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [(1, 6, 0.125), (6, 1, 0.125), (0, 5, 0.0625), (0, 0, 1.0), (3, 3, 1.0), (0, 1, 1.0), (2, 8, 0.109375)],
)
def test_mcnemar_known_values(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, abs=1e-12)


def test_mcnemar_matches_brute_force() -> None:
    for b, c in product(range(25), repeat=2):
        if b + c:
            assert mcnemar_exact_p(b, c) == pytest.approx(_brute_force_p(b, c), rel=1e-9), (b, c)


def test_mcnemar_stays_exact_for_large_runs() -> None:
    # 0 vs 264 discordant pairs: 2 / 2**264, far below what float sums of terms would keep
    assert mcnemar_exact_p(0, 264) == pytest.approx(2 / 2**264, rel=1e-12)
    assert 0 < mcnemar_exact_p(10, 254) < 1e-50


def test_bootstrap_is_deterministic_and_contains_the_mean() -> None:
    diffs = [1.0, 0.0, 0.0, -1.0, 1.0, 1.0, 0.0, 0.5, 0.0, 1.0, -0.5, 0.0]
    ci = bootstrap_mean_diff_ci(diffs)
    assert ci == bootstrap_mean_diff_ci(diffs, seed=0)
    assert ci is not None
    low, high = ci
    mean = sum(diffs) / len(diffs)
    assert low < mean < high
    assert min(diffs) <= low and high <= max(diffs)
    spread = [0.37, -0.12, 0.91, 0.05, -0.66, 0.28, 0.44]  # distinct values, so the seed shows
    assert bootstrap_mean_diff_ci(spread, seed=1) != bootstrap_mean_diff_ci(spread, seed=2)


def _bootstrap_by_hand(diffs: list[float], resamples: int, seed: int) -> tuple[float, float]:
    """The bootstrap in plain Python, as it was first written: `random.Random(seed).choices`."""
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(resamples))
    return means[math.floor(0.025 * resamples)], means[math.ceil(0.975 * resamples) - 1]


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (3, 5), (17, 0), (264, 0), (40, 9)])
def test_bootstrap_draws_exactly_what_random_choices_draws(n: int, seed: int) -> None:
    rng = random.Random(n)
    diffs = [rng.choice([-1.0, -0.57, 0.0, 0.33, 0.5, 1.0]) + rng.random() / 100 for _ in range(n)]
    assert bootstrap_mean_diff_ci(diffs, resamples=2_000, seed=seed) == _bootstrap_by_hand(diffs, 2_000, seed)


def test_groups_drawn_together_read_as_each_drawn_alone() -> None:
    """One draw for every group (the longest's), and a group repeated value for value not drawn again:
    each interval is the one its group gets alone, to the last bit, and by hand for a short one."""
    rng = random.Random(31)
    whole = [rng.choice([-1.0, -0.57, 0.0, 0.33, 0.5, 1.0]) + rng.random() / 100 for _ in range(60)]
    groups = [whole, whole[:25], [], whole[25:], whole[:7], list(whole), [0.0, 0.0], [-0.0, 0.0]]
    together = bootstrap_mean_diff_cis(groups, resamples=1_000, seed=3)
    assert together == [bootstrap_mean_diff_ci(g, resamples=1_000, seed=3) for g in groups]
    assert together[4] == _bootstrap_by_hand(whole[:7], 1_000, 3)
    assert together[2] is None
    assert bootstrap_mean_diff_cis([[], []]) == [None, None]


@pytest.mark.parametrize(("n", "seed"), [(1, 0), (9, 4), (264, 0), (51, 7)])
def test_whole_number_differences_add_as_integers_to_the_same_bits(n: int, seed: int) -> None:
    """A pass/fail reward's differences are -1, 0 or 1: added as integers in one call, they must still
    give the interval `random.choices` and `sum()` give, to the last bit (-0.0 and large values too)."""
    rng = random.Random(n)
    diffs = [rng.choice([-1.0, 0.0, -0.0, 1.0, 1.0, 3.0, -2.0]) for _ in range(n)]
    assert bootstrap_mean_diff_ci(diffs, resamples=2_000, seed=seed) == _bootstrap_by_hand(diffs, 2_000, seed)
    huge = [rng.choice([2.0**60, -(2.0**61), 5.0]) for _ in range(n)]  # past the integer path's bound
    assert bootstrap_mean_diff_ci(huge, resamples=500, seed=seed) == _bootstrap_by_hand(huge, 500, seed)


def test_groups_of_one_size_share_their_picks_and_keep_their_values() -> None:
    """Groups of the same size pick the same positions; each still resamples its own values, whole or not."""
    rng = random.Random(8)
    whole = [rng.choice([-1.0, 0.0, 1.0]) for _ in range(30)]
    fractional = [rng.choice([-0.5, 0.25, 1.0]) + rng.random() / 10 for _ in range(30)]
    mixed = whole[:15] + fractional[15:]
    together = bootstrap_mean_diff_cis([whole, fractional, mixed, whole[:12]], resamples=1_000, seed=2)
    assert together == [
        _bootstrap_by_hand(group, 1_000, 2) for group in (whole, fractional, mixed, whole[:12])
    ]
    assert len(set(together)) == 4


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_mean_diff_ci([]) is None
    assert bootstrap_mean_diff_ci([0.25]) == (0.25, 0.25)
    assert bootstrap_mean_diff_ci([1.0, 1.0, 1.0], resamples=50) == (1.0, 1.0)


def test_pair_kinds_and_completeness() -> None:
    assert _pair("a", F, P).kind is PairKind.MCP_ONLY
    assert _pair("a", P, F).kind is PairKind.BASELINE_ONLY
    assert _pair("a", P, P).kind is PairKind.BOTH_PASS
    assert _pair("a", F, F).kind is PairKind.BOTH_FAIL
    for other in (LaneStatus.ERRORED, LaneStatus.TIMEOUT, LaneStatus.QUEUED, LaneStatus.CANCELLED):
        assert not _pair("a", P, other).complete
        assert _pair("a", other, P).kind is PairKind.INCOMPLETE


def test_summarize_counts_complete_pairs_only() -> None:
    pairs = [
        _pair("w1", F, P),
        _pair("w2", F, P),
        _pair("w3", F, P),
        _pair("r1", P, F),
        _pair("bp", P, P),
        _pair("bf", F, F),
        _pair("err", P, LaneStatus.ERRORED),
        _pair("q", LaneStatus.QUEUED, LaneStatus.CANCELLED),
    ]
    s = summarize(pairs)
    assert (s.n, s.excluded) == (6, 2)
    assert (s.baseline.k, s.mcp.k) == (2, 4)
    assert (s.both_pass, s.mcp_only, s.baseline_only, s.both_fail) == (1, 3, 1, 1)
    assert s.diff_pts == pytest.approx(100 * 2 / 6)
    assert s.p_value == mcnemar_exact_p(1, 3) == 0.625
    assert s.baseline.mean_reward == pytest.approx(2 / 6)
    assert s.mcp.mean_reward == pytest.approx(4 / 6)
    assert s.mean_diff == pytest.approx(2 / 6)
    assert s.ci is not None and s.ci[0] <= s.mean_diff <= s.ci[1]


def test_summarize_without_complete_pairs() -> None:
    s = summarize([_pair("q", LaneStatus.QUEUED, LaneStatus.QUEUED)])
    assert (s.n, s.excluded, s.p_value) == (0, 1, 1.0)
    assert s.diff_pts is None and s.mean_diff is None and s.ci is None
    assert s.baseline.rate is None and s.baseline.mean_reward is None
    assert summarize([]).n == 0


def test_missing_reward_counts_as_zero_and_usage_sums_what_was_reported() -> None:
    pairs = [
        PairOutcome("a", "s", LaneResult(F, None, 100, 10, None), LaneResult(P, 0.5, 200, None, 0.25)),
        PairOutcome("b", "s", LaneResult(P, 1.0, None, None, None), LaneResult(P, 1.0, 300, 30, 0.5)),
        PairOutcome("c", "s", LaneResult(LaneStatus.ERRORED, None, 999, 999, 9.0), LaneResult(P, 1.0)),
    ]
    s = summarize(pairs)
    assert s.baseline.mean_reward == pytest.approx(0.5)
    assert s.mcp.mean_reward == pytest.approx(0.75)
    assert (s.baseline.input_tokens, s.baseline.output_tokens, s.baseline.cost_usd) == (100, 10, None)
    assert (s.mcp.input_tokens, s.mcp.output_tokens, s.mcp.cost_usd) == (500, 30, 0.75)


def test_lane_totals_of_one_lane() -> None:
    totals = lane_totals([_lane(P), _lane(F), _lane(LaneStatus.TIMEOUT), _lane(P, 0.5)])
    assert (totals.n, totals.k, totals.rate) == (3, 2, pytest.approx(2 / 3))
    assert totals.mean_reward == pytest.approx(0.5)


def test_summarize_by_suite_in_name_order() -> None:
    pairs = [
        _pair("a", F, P, "csb_sdlc_fix"),
        _pair("b", P, P, "csb_org_org"),
        _pair("c", P, F, "csb_sdlc_fix"),
    ]
    by_suite = summarize_by_suite(pairs)
    assert list(by_suite) == ["csb_org_org", "csb_sdlc_fix"]
    assert (by_suite["csb_sdlc_fix"].mcp_only, by_suite["csb_sdlc_fix"].baseline_only) == (1, 1)
    assert by_suite["csb_org_org"].both_pass == 1


def test_order_for_report_puts_disagreements_first_and_keeps_run_order() -> None:
    pairs = [
        _pair("bf", F, F),
        _pair("err", LaneStatus.ERRORED, P),
        _pair("r1", P, F),
        _pair("bp", P, P),
        _pair("w1", F, P),
        _pair("r2", P, F),
        _pair("w2", F, P),
    ]
    assert [p.task_id for p in order_for_report(pairs)] == ["w1", "w2", "r1", "r2", "bf", "bp", "err"]


def test_formatting() -> None:
    assert fmt_rate(3, 11) == "3/11 (27.3 %)"
    assert fmt_rate(0, 0) == "0/0 (n/a)"
    assert fmt_pts(27.2727) == "+27.3 pts"
    assert fmt_pts(-9.09) == "-9.1 pts"
    assert fmt_pts(0.0) == fmt_pts(-0.04) == "+0.0 pts"
    assert fmt_signed(-0.004, 2) == "+0.00"
    assert fmt_p(0.109375) == "p = 0.109"
    assert fmt_p(0.0625) == "p = 0.0625"
    assert fmt_p(1.0) == "p = 1.00"
    assert fmt_p(0.5) == "p = 0.500"
    assert fmt_p(1.2345e-5) == "p = 1.23e-05"
