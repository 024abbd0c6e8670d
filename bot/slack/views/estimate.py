"""The words for a run's estimate and its budget lines: on the approval card, and against the actual cost
in the finished report."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.budget import BudgetCheck, BudgetLine, Level, Scope
from bot.domain.estimate import Basis, RunEstimate, Spread
from bot.domain.words import agree, plural
from bot.slack.views.format import code
from bot.slack.views.run_card import duration

RANGE = "p10–p90"


def dollars(value: float) -> str:
    return f"${value:,.2f}"


def estimate_text(estimate: RunEstimate | None) -> str:
    """One paragraph: per task and for the run, the duration, and what history it rests on."""
    if estimate is None or not estimate.has_history:
        return ":bar_chart: *Estimate*: no history (no finished lane of these suites yet)."
    parts: list[str] = []
    if estimate.cost_usd is not None and estimate.cost_per_task_usd is not None:
        parts.append(
            f"{_money(estimate.cost_per_task_usd)} per task, "
            f"{_money(estimate.cost_usd)} for {plural(estimate.tasks, 'task')}"
        )
    else:
        parts.append("cost not reported by those lanes")
    if estimate.wall_seconds is not None:
        parts.append(f"about {_time(estimate.wall_seconds)} on {plural(estimate.parallel, 'slot')}")
    text = (
        f":bar_chart: *Estimate* (median, {RANGE} in brackets): " + "; ".join(parts) + ". " + _basis(estimate)
    )
    if estimate.lanes_without_history:
        text += (
            f" {plural(estimate.lanes_without_history, 'lane')} of suites with no history "
            f"{agree(estimate.lanes_without_history, 'is', 'are')} not counted."
        )
    return text


def _basis(estimate: RunEstimate) -> str:
    lanes = plural(estimate.samples, "finished lane")
    if estimate.basis is Basis.EXACT:
        return f"From {lanes} of the same suite, config and model."
    estimated = estimate.lanes - estimate.lanes_without_history
    if estimate.exact_lanes:
        return (
            f"From {lanes}: {estimate.exact_lanes} of {plural(estimated, 'lane')} by the same suite, config "
            "and model, the rest by the same suite (any config or model)."
        )
    return f"From {lanes} of the same suite (no finished lane of this config and model)."


def _money(spread: Spread) -> str:
    return f"{dollars(spread.median)} ({dollars(spread.low)}–{dollars(spread.high)})"


def _time(spread: Spread) -> str:
    return f"{_seconds(spread.median)} ({_seconds(spread.low)}–{_seconds(spread.high)})"


def _seconds(value: float) -> str:
    return duration(timedelta(seconds=value))


def budget_lines_text(budget: BudgetCheck) -> list[str]:
    """One line per budget; the block line's loud, since Approve then needs an override approver."""
    return [_budget_line(line) for line in budget.lines]


def _budget_line(line: BudgetLine) -> str:
    what = f"{line.name} runs" if line.scope is Scope.CATEGORY else f"runs of {code(line.name)}"
    spent = f"{what} have spent {dollars(line.spent_usd)} of {dollars(line.budget_usd)} in {line.month} (UTC)"
    projected = f"with this run's estimate {dollars(line.projected_usd)}"
    if line.level is Level.BLOCK:
        return (
            f":rotating_light: *OVER BUDGET*: {spent}; {projected}, past the block line of "
            f"{dollars(line.block_usd)}. Approve needs an approver allowed for overrides, and is recorded "
            "in the audit."
        )
    if line.level is Level.WARN:
        return f":warning: *Budget*: {spent}; {projected}, past the warning line of {dollars(line.warn_usd)}."
    return f":white_check_mark: Budget: {spent}; {projected} (block line {dollars(line.block_usd)})."


def estimate_vs_actual(
    estimate: RunEstimate | None, cost_usd: float | None, wall_seconds: float | None
) -> str:
    """The report's line: what the approver saw against what the run cost and took."""
    if estimate is None:
        return ""
    said = []
    if estimate.cost_usd is not None:
        said.append(_money(estimate.cost_usd))
    if estimate.wall_seconds is not None:
        said.append(f"about {_time(estimate.wall_seconds)}")
    shown = f"{', '.join(said)} ({RANGE} in brackets)" if said else "nothing (no history)"
    actual = [dollars(cost_usd) if cost_usd is not None else "cost not reported"]
    if wall_seconds is not None:
        actual.append(_seconds(wall_seconds))
    return f"*Estimate vs actual*: estimated {shown}; actual {', '.join(actual)}."
