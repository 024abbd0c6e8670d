"""`/csb spend [month]`: the month's recorded lane cost by category, model, suite and config, in words."""

from __future__ import annotations

from collections.abc import Mapping

from bot.domain.spend import DIMENSIONS, MonthSpend, SpendItem
from bot.domain.words import plural
from bot.slack.views.estimate import dollars
from bot.slack.views.format import SECTION_LIMIT, chunk_lines, code

ITEMS_SHOWN = 15  # per dimension; the CSV beside the chart holds every row
_TITLES = {"category": "By category", "model": "By model", "suite": "By suite", "config": "By config"}


def spend_text(spend: MonthSpend, budgets: Mapping[str, float]) -> list[str]:
    """The answer, in parts that each fit a message: the total, then each dimension biggest first."""
    head = f"*Spend in {spend.month}* (UTC, lanes that finished in the month)"
    if not spend.lanes:
        return [f"{head}: no lane finished in {spend.month}."]
    total = f"{head}: {dollars(spend.cost_usd)} over {plural(spend.lanes, 'lane')}"
    if spend.unpriced:
        total += f" ({plural(spend.unpriced, 'lane')} reported no cost)"
    lines = [total]
    for dimension in DIMENSIONS:
        items = spend.by[dimension]
        lines.append(f"*{_TITLES[dimension]}*")
        lines += [_item(item, budgets if dimension == "category" else {}) for item in items[:ITEMS_SHOWN]]
        if len(items) > ITEMS_SHOWN:
            lines.append(f"  … {len(items) - ITEMS_SHOWN} more in the CSV")
    return chunk_lines(lines, SECTION_LIMIT)


def _item(item: SpendItem, budgets: Mapping[str, float]) -> str:
    line = f"  {code(item.name, 200)}  {dollars(item.cost_usd)}  ({plural(item.lanes, 'lane')})"
    budget = budgets.get(item.name)
    if budget is not None:
        share = f", {100 * item.cost_usd / budget:.0f} %" if budget else ""
        line += f" of a {dollars(budget)} budget{share}"
    return line


def spend_comment(user_id: str, month: str) -> str:
    return (
        f"<@{user_id}> asked for the spend of {month}: recorded lane cost by category, model, suite "
        "and config."
    )
