"""The report's statistics checked against scipy where scipy has the test, and against a worked example of
Newcombe (1998) where it has none: the exact McNemar p, Wilson's interval, the paired bootstrap of the
mean reward difference, and Newcombe's interval for a paired difference of rates.

scipy is a dev dependency only: the bot computes these itself (stdlib and numpy), and the last test
keeps scipy out of bot/.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats
from test_layering import imports

from bot.domain.intervals import Z95, paired_diff_interval, wilson_interval
from bot.domain.stats import bootstrap_mean_diff_ci, mcnemar_exact_p

BOT = Path(__file__).resolve().parents[1] / "bot"

# (b, c): the discordant counts of a run, baseline-only wins and MCP-only wins. No discordant pair, all
# one way, a tie, small and large runs (264 tasks is a full CSB suite), and p-values down to 1e-151.
DISCORDANT = [
    (0, 1), (1, 0), (1, 1), (0, 5), (5, 0), (2, 3), (3, 9), (9, 3), (7, 7), (0, 12), (1, 17),
    (20, 41), (55, 80), (100, 100), (0, 264), (120, 144), (31, 233), (250, 251), (0, 500),
]  # fmt: skip


@pytest.mark.parametrize(("b", "c"), DISCORDANT)
def test_mcnemar_exact_p_is_scipys_binomial_test(b: int, c: int) -> None:
    """The exact McNemar test is a two-sided binomial test of b in b + c at 1/2 (summed in integers
    here, in floats by scipy: they agree to the last few bits, even at p = 1e-151)."""
    expected = scipy_stats.binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact_p(b, c) == pytest.approx(expected, rel=1e-9, abs=0)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    """No discordant pair is no evidence either way: p = 1 (scipy's test needs at least one trial)."""
    with pytest.raises(ValueError):
        scipy_stats.binomtest(0, 0, 0.5)
    assert mcnemar_exact_p(0, 0) == 1.0


# (k, n): passes of n tasks. 0 % and 100 % (where a Wald interval collapses), one task, and large n.
RATES = [
    (0, 1), (1, 1), (0, 5), (5, 5), (1, 5), (3, 7), (0, 20), (20, 20), (1, 20), (19, 20),
    (12, 50), (48, 50), (38, 50), (132, 264), (0, 264), (264, 264), (1, 264), (200, 264), (517, 1000),
]  # fmt: skip


@pytest.mark.parametrize(("k", "n"), RATES)
def test_wilson_interval_is_scipys(k: int, n: int) -> None:
    ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    ours = wilson_interval(k, n)
    assert ours is not None
    assert ours[0] == pytest.approx(ci.low, abs=1e-12)
    assert ours[1] == pytest.approx(ci.high, abs=1e-12)
    assert 0.0 <= ours[0] <= k / n <= ours[1] <= 1.0


def test_wilson_interval_without_tasks_is_none() -> None:
    assert wilson_interval(0, 0) is None


def test_the_95_percent_quantile_is_scipys() -> None:
    assert scipy_stats.norm.ppf(0.975) == pytest.approx(Z95, rel=1e-15)


def _reward_pairs(n: int, seed: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and MCP rewards of `n` tasks: pass/fail (0 or 1) or partial credit (rewards in [0, 1])."""
    rng = np.random.default_rng(seed)
    if kind == "binary":
        return rng.integers(0, 2, n).astype(float), rng.integers(0, 2, n).astype(float)
    baseline = rng.random(n)
    return baseline, np.clip(baseline + rng.normal(0.08, 0.3, n), 0.0, 1.0)


# How far two percentile bootstraps of 10,000 resamples may fall apart. A percentile's Monte Carlo standard
# error is sqrt(p (1 - p) / B) / f(q_p), f the bootstrap distribution's density there; for a near-normal
# distribution of sd s (the sd of the mean, sd(diffs) / sqrt(n)) at p = 0.025, B = 10,000 that is
# 0.00156 s / 0.0584 = 0.027 s, and two independent draws differ by sqrt(2) times that, 0.038 s. Allowed:
# 0.15 s, four of those standard errors (a chance of some 1e-4 to fail on a correct interval; with fixed
# seeds the draws, and so the outcome, are the same on every run). scipy interpolates between order
# statistics and the bot takes one: the spacing there is far below this bound.
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SDS = 0.15


@pytest.mark.parametrize(
    ("n", "seed", "kind"),
    [(12, 1, "binary"), (30, 2, "partial"), (50, 3, "binary"), (264, 4, "binary"), (264, 5, "partial")],
)
def test_bootstrap_interval_is_scipys_paired_percentile_bootstrap(n: int, seed: int, kind: str) -> None:
    baseline, mcp = _reward_pairs(n, seed, kind)
    diffs = mcp - baseline
    ours = bootstrap_mean_diff_ci(diffs.tolist(), resamples=BOOTSTRAP_RESAMPLES)
    theirs = scipy_stats.bootstrap(
        (mcp, baseline),
        lambda m, b, axis: np.mean(m - b, axis=axis),
        paired=True,  # a task's two lanes are drawn together
        n_resamples=BOOTSTRAP_RESAMPLES,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert ours is not None
    sd_of_mean = float(np.std(diffs)) / math.sqrt(n)
    assert sd_of_mean > 0
    assert ours[0] == pytest.approx(theirs.low, abs=BOOTSTRAP_SDS * sd_of_mean)
    assert ours[1] == pytest.approx(theirs.high, abs=BOOTSTRAP_SDS * sd_of_mean)
    assert ours[0] <= float(np.mean(diffs)) <= ours[1]


def test_bootstrap_of_identical_lanes_is_a_point_as_scipys() -> None:
    """Every pair agreeing exactly: each resample's mean is 0, and both intervals are that point."""
    rewards = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    assert bootstrap_mean_diff_ci([0.0] * 5) == (0.0, 0.0)
    theirs = scipy_stats.bootstrap(
        (rewards, rewards),
        lambda m, b, axis: np.mean(m - b, axis=axis),
        paired=True,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(0),
    ).confidence_interval
    assert (theirs.low, theirs.high) == (0.0, 0.0)


def test_newcombe_paired_interval_is_his_worked_example() -> None:
    """Newcombe (1998), "Improved confidence intervals for the difference between binomial proportions
    based on paired data", Stat Med 17:2635-50, Table II, example (a): e = 36 pairs positive on both,
    f = 12 on the first only, g = 2 on the second only, h = 0 on neither (n = 50); method 10 gives
    0.0569 to 0.3404 around theta = (f - g) / n = 0.2. scipy has no such interval.

    Worked by hand, as the paper lays method 10 out:
      p1 = 48/50 = 0.96, Wilson 0.8654 to 0.9890; p2 = 38/50 = 0.76, Wilson 0.6259 to 0.8570.
      phi = (eh - fg) / sqrt((e+f)(g+h)(e+g)(f+h)) = (0 - 24) / sqrt(48 * 2 * 38 * 12) = -24 / 209.2271
          = -0.1147 (eh < fg, so no correction of the numerator).
      delta = sqrt((p1 - l1)^2 - 2 phi (p1 - l1)(u2 - p2) + (u2 - p2)^2)
            = sqrt(0.0946^2 + 2 * 0.1147 * 0.0946 * 0.0970 + 0.0970^2) = 0.1431
      eps   = sqrt((u1 - p1)^2 - 2 phi (u1 - p1)(p2 - l2) + (p2 - l2)^2)
            = sqrt(0.0290^2 + 2 * 0.1147 * 0.0290 * 0.1341 + 0.1341^2) = 0.1404
      theta - delta = 0.0569, theta + eps = 0.3404.
    """
    assert wilson_interval(48, 50) == pytest.approx((0.8654, 0.9890), abs=5e-5)
    assert wilson_interval(38, 50) == pytest.approx((0.6259, 0.8570), abs=5e-5)
    low, high = paired_diff_interval(36, 12, 2, 0) or (math.nan, math.nan)
    assert (low, high) == pytest.approx((0.0569, 0.3404), abs=5e-5)
    assert paired_diff_interval(36, 2, 12, 0) == pytest.approx((-high, -low), abs=1e-12)  # the mirror


def test_newcombe_paired_interval_without_discordant_pairs_is_no_point() -> None:
    """All pairs concordant (eh > fg): Newcombe's guard, max(eh - fg - n/2, 0), keeps phi from making
    the interval a point. Worked by hand for e = h = 5 (n = 10): eh - fg = 25, less n/2 = 20; phi =
    20 / sqrt(5 * 5 * 5 * 5) = 0.8; both rates 0.5 with Wilson 0.2366 to 0.7634, so d = 0.2634 on each
    side and delta = eps = sqrt(2 d^2 (1 - 0.8)) = 0.1666."""
    low, high = paired_diff_interval(5, 0, 0, 5) or (math.nan, math.nan)
    assert (low, high) == pytest.approx((-0.1666, 0.1666), abs=5e-5)
    assert paired_diff_interval(0, 0, 0, 0) is None


def test_the_bot_does_not_need_scipy() -> None:
    """scipy is for these checks only (the dev extra): nothing under bot/ imports it."""
    found = [
        str(use)
        for path in sorted(BOT.rglob("*.py"))
        for use in imports(path.read_text(), str(path.relative_to(BOT)))
        if use.what == "scipy" or use.what.startswith("scipy.")
    ]
    assert found == []
