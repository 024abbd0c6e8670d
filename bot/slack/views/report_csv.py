"""The full per-task table of a report as CSV text, uploaded in the thread when the message cannot hold it."""

from __future__ import annotations

import csv
import io

from bot.domain.spec import LaneRole
from bot.domain.stats import LaneResult
from bot.slack.views.report import ReportView, task_order

COLUMNS = (
    "task_id",
    "suite",
    "baseline_status",
    "baseline_reward",
    "mcp_status",
    "mcp_reward",
    "baseline_cost_usd",
    "mcp_cost_usd",
    "baseline_tokens",
    "mcp_tokens",
    "baseline_reason",
    "mcp_reason",
)


def csv_filename(view: ReportView) -> str:
    """Named after the run's folder, or after the run when it has one folder per suite."""
    name = view.output_dirs[0].rsplit("/", 1)[-1] if len(view.output_dirs) == 1 else f"run{view.run_id}"
    return f"{name}_tasks.csv"


def report_csv(view: ReportView) -> str:
    """Rows in the report's order. A lane the run did not run (single-lane runs) has empty cells;
    so does anything Harbor did not report. Tokens are input plus output; a reason is kept whole."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for pair in task_order(view):
        baseline = _cells(pair.baseline if view.single_lane in (None, LaneRole.BASELINE) else None)
        mcp = _cells(pair.mcp if view.single_lane in (None, LaneRole.MCP) else None)
        writer.writerow(
            [pair.task_id, pair.suite, *baseline[:2], *mcp[:2], *_pairwise(baseline[2:], mcp[2:])]
        )
    return out.getvalue()


def _cells(result: LaneResult | None) -> tuple[str, str, str, str, str]:
    """Status, reward, cost, tokens and the whole reason of one lane as CSV cells."""
    if result is None:
        return "", "", "", "", ""
    tokens = None
    if result.input_tokens is not None or result.output_tokens is not None:
        tokens = (result.input_tokens or 0) + (result.output_tokens or 0)
    reason = result.reason or ""
    return result.status.value, _number(result.reward), _number(result.cost_usd), _number(tokens), reason


def _number(value: float | None) -> str:
    return "" if value is None else str(value)


def _pairwise(baseline: tuple[str, ...], mcp: tuple[str, ...]) -> list[str]:
    """Baseline then MCP for each remaining column: cost, tokens, reason."""
    return [cell for pair in zip(baseline, mcp, strict=True) for cell in pair]
