"""Estimates, budgets and `/csb spend`'s month: the pure rules, with the figures worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.domain.budget import Budget, Level, budget_lines, month_bounds, month_of
from bot.domain.errors import InfraError, UserInputError
from bot.domain.estimate import Basis, GroupHistory, LaneSample, Spread, estimate_run, spread
from bot.domain.policy import Actor, PolicyConfig, may_approve
from bot.domain.spec import Category
from bot.domain.spend import SpendRow, month_spend, parse_month
from bot.settings import load_settings

USAGE = "/csb spend [YYYY-MM]"
SLACK = {"slack_bot_token": "xoxb-spend-test", "slack_signing_secret": "spend-test-secret"}


def _samples(costs: list[float], seconds: list[float]) -> tuple[LaneSample, ...]:
    return tuple(LaneSample(cost, secs) for cost, secs in zip(costs, seconds, strict=True))


# --- the estimate ------------------------------------------------------------------------------------------


def test_spread_is_the_median_with_inclusive_deciles() -> None:
    # 1..11: median 6; inclusive deciles put p10 at 2 and p90 at 10.
    assert spread([float(v) for v in range(1, 12)]) == Spread(median=6.0, low=2.0, high=10.0)
    # two values: p10 = 1 + 0.1 × 2 = 1.2, p90 = 1 + 0.9 × 2 = 2.8
    assert spread([1.0, 3.0]) == Spread(median=2.0, low=1.2, high=2.8)
    assert spread([4.0]) == Spread(median=4.0, low=4.0, high=4.0)
    assert spread([]) is None


def test_a_run_is_estimated_per_lane_group_and_summed() -> None:
    history = {
        ("fix", "baseline"): GroupHistory(Basis.EXACT, _samples([1.0, 2.0, 3.0], [60, 120, 180])),
        ("fix", "mcp"): GroupHistory(Basis.EXACT, _samples([2.0, 4.0, 6.0], [120, 240, 360])),
    }
    estimate = estimate_run({("fix", "baseline"): 10, ("fix", "mcp"): 10}, history, tasks=10, parallel=4)
    assert estimate.basis is Basis.EXACT
    assert estimate.samples == 6 and estimate.exact_lanes == 20 and estimate.lanes_without_history == 0
    # baseline: median 2, p10 1.2, p90 2.8; MCP: 4, 2.4, 5.6; ten lanes of each
    assert estimate.cost_usd == Spread(median=60.0, low=36.0, high=84.0)
    assert estimate.cost_per_task_usd == Spread(median=6.0, low=3.6, high=8.4)
    # lane-seconds: 10 × 120 + 10 × 240 = 3600 (p10 10 × 72 + 10 × 144, p90 10 × 168 + 10 × 336)
    assert estimate.lane_seconds == Spread(median=3600.0, low=2160.0, high=5040.0)
    assert estimate.wall_seconds == Spread(median=900.0, low=540.0, high=1260.0)  # over 4 slots


def test_a_group_without_its_own_history_falls_back_to_the_suite_and_else_is_left_out() -> None:
    history = {
        ("fix", "baseline"): GroupHistory(Basis.EXACT, _samples([1.0], [100])),
        ("fix", "mcp"): GroupHistory(Basis.SUITE, _samples([3.0, 5.0], [200, 400])),
        ("debug", "baseline"): GroupHistory(Basis.NONE),
    }
    groups = {("fix", "baseline"): 2, ("fix", "mcp"): 2, ("debug", "baseline"): 1}
    estimate = estimate_run(groups, history, tasks=3, parallel=8)
    assert estimate.basis is Basis.SUITE  # the weakest the figures rest on
    assert estimate.exact_lanes == 2 and estimate.lanes_without_history == 1 and estimate.samples == 3
    cost = estimate.cost_usd
    assert cost is not None  # 2 × 1 + 2 × 4 = 10; p10 2 × 1 + 2 × 3.2, p90 2 × 1 + 2 × 4.8
    assert (cost.median, cost.low, cost.high) == pytest.approx((10.0, 8.4, 11.6))
    # 2 × 100 + 2 × 300 = 800 lane-seconds over min(8 slots, 5 lanes)
    assert estimate.wall_seconds is not None and estimate.wall_seconds.median == pytest.approx(160.0)
    assert estimate.lanes == 5


def test_no_history_at_all() -> None:
    estimate = estimate_run({("fix", "baseline"): 3}, {}, tasks=3, parallel=2)
    assert estimate.basis is Basis.NONE and not estimate.has_history
    assert estimate.cost_usd is None and estimate.wall_seconds is None and estimate.lanes_without_history == 3


def test_lanes_that_reported_no_cost_still_give_a_duration() -> None:
    history = {("fix", "baseline"): GroupHistory(Basis.EXACT, _samples([None, None], [60, 60]))}  # type: ignore[list-item]
    estimate = estimate_run({("fix", "baseline"): 2}, history, tasks=2, parallel=2)
    assert estimate.cost_usd is None and estimate.wall_seconds == Spread(median=60.0, low=60.0, high=60.0)


# --- budgets -----------------------------------------------------------------------------------------------


def _lines(spent: float, estimate: float, model_spent: float = 0.0) -> list[tuple[str, Level, bool]]:
    budget = Budget(monthly_usd=300, models={"anthropic/opus": 100})
    check = budget_lines(
        budget,
        category="staging",
        model="anthropic/opus",
        month="2026-03",
        category_spent=spent,
        model_spent=model_spent,
        estimate_usd=estimate,
    )
    return [(line.name, line.level, line.crossed) for line in check.lines]


def test_csb_lines_are_strictly_above_half_and_all_of_the_budget() -> None:
    assert _lines(100, 50)[0] == ("staging", Level.OK, False)  # 150 is not above 150
    assert _lines(100, 50.01)[0] == ("staging", Level.WARN, False)
    assert _lines(250, 50)[0] == ("staging", Level.WARN, False)  # 300 is not above 300
    assert _lines(250, 50.01)[0] == ("staging", Level.BLOCK, False)
    assert _lines(300.01, 0)[0] == ("staging", Level.BLOCK, True)  # spent past the line: a run drains


def test_a_model_named_in_the_budget_has_its_own_line() -> None:
    assert _lines(10, 20, model_spent=90) == [
        ("staging", Level.OK, False),
        ("anthropic/opus", Level.BLOCK, False),  # 90 + 20 > 100
    ]


def test_fractions_are_configurable() -> None:
    budget = Budget(monthly_usd=100, warn_fraction=0.8, block_fraction=0.9)
    check = budget_lines(
        budget,
        category="official",
        model="m",
        month="2026-03",
        category_spent=85,
        model_spent=0,
        estimate_usd=0,
    )
    assert check.warned and not check.blocked
    assert check.lines[0].warn_usd == 80 and check.lines[0].block_usd == 90


def test_a_budget_past_its_block_line_needs_an_override_approver() -> None:
    policy = PolicyConfig.model_validate(
        {
            "staging": {
                "approvers": {"users": ["U0BOB", "U0CAROL"]},
                "override_approvers": {"users": ["U0CAROL"]},
                "budget": {"monthly_usd": 10},
            }
        }
    )
    bob, carol = Actor(user_id="U0BOB"), Actor(user_id="U0CAROL")
    refused = may_approve(policy, Category.STAGING, bob, requester="U0ALICE", budget_override=True)
    assert (
        refused.reason
        == "this request is past its monthly budget's block line; only <@U0CAROL> may approve it"
    )
    assert may_approve(policy, Category.STAGING, carol, requester="U0ALICE", budget_override=True).allowed
    assert may_approve(policy, Category.STAGING, bob, requester="U0ALICE").allowed


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("monthly_usd = -5", "policy.staging.budget.monthly_usd: Input should be greater than or equal to 0"),
        ('monthly_usd = "300"', "policy.staging.budget.monthly_usd: Input should be a valid number"),
        ('monthly_usd = "lots"', "policy.staging.budget.monthly_usd: Input should be a valid number"),
        ("monthly_usd = nan", "policy.staging.budget.monthly_usd: Input should be a finite number"),
        ("monthly_usd = 300\nmodels = { m = -1 }", "policy.staging.budget.models.m: Input should be greater"),
        (
            "monthly_usd = 300\nwarn_fraction = 0",
            "policy.staging.budget.warn_fraction: Input should be greater",
        ),
        ("block_fraction = 1.0", "policy.staging.budget.monthly_usd: Field required"),
        ("monthly_usd = 300\nwarn_fraction = 1.5", "warn_fraction (1.5) is above block_fraction (1.0)"),
        ("monthly_usd = 300\nmontly = 1", "policy.staging.budget.montly: Extra inputs are not permitted"),
    ],
)
def test_a_bad_budget_is_a_config_error_naming_its_key(tmp_path: Path, budget: str, message: str) -> None:
    path = tmp_path / "csb-bot.toml"
    path.write_text(f"[policy.staging.budget]\n{budget}\n")
    with pytest.raises(InfraError) as refused:
        load_settings(**SLACK, csb_config=str(path)).load_config()
    assert f"config file {path} is invalid: " in str(refused.value)
    assert message in str(refused.value)


# --- months ------------------------------------------------------------------------------------------------


def test_months_are_utc_and_bounded() -> None:
    assert month_of(datetime(2026, 3, 31, 23, 59, tzinfo=UTC)) == "2026-03"
    assert month_bounds("2026-12") == (datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    now = datetime(2026, 3, 5, tzinfo=UTC)
    assert parse_month("", now, USAGE) == "2026-03"
    assert parse_month(" 2025-11 ", now, USAGE) == "2025-11"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2026-13", "`2026-13` is not a month: write it as YYYY-MM, e.g. 2026-03"),
        ("march", "`march` is not a month: write it as YYYY-MM, e.g. 2026-03"),
        ("2026-3", "`2026-3` is not a month: write it as YYYY-MM, e.g. 2026-03"),
        ("0000-01", "`0000-01` is not a month: write it as YYYY-MM, e.g. 2026-03"),
        ("2026-03 2026-04", "expected one month as YYYY-MM, got 2 words"),
    ],
)
def test_a_malformed_month_is_one_line_with_the_usage(text: str, message: str) -> None:
    with pytest.raises(UserInputError) as refused:
        parse_month(text, datetime(2026, 3, 5, tzinfo=UTC), USAGE)
    assert refused.value.message == message and refused.value.hint == USAGE


def test_a_month_is_summed_along_each_dimension_biggest_first() -> None:
    rows = [
        SpendRow("staging", "m1", "fix", "baseline", lanes=4, priced=4, cost_usd=4.0),
        SpendRow("staging", "m1", "fix", "mcp", lanes=4, priced=3, cost_usd=6.0),
        SpendRow("official", "m2", "debug", "baseline", lanes=2, priced=2, cost_usd=5.0),
    ]
    spend = month_spend("2026-03", rows)
    assert (spend.lanes, spend.priced, spend.unpriced, spend.cost_usd) == (10, 9, 1, 15.0)
    assert [(i.name, i.cost_usd, i.lanes) for i in spend.by["category"]] == [
        ("staging", 10.0, 8),
        ("official", 5.0, 2),
    ]
    assert [(i.name, i.cost_usd) for i in spend.by["config"]] == [("baseline", 9.0), ("mcp", 6.0)]
    assert [i.name for i in spend.by["suite"]] == ["fix", "debug"]
    assert [i.name for i in spend.by["model"]] == ["m1", "m2"]
