"""The full per-task table of a report as CSV text, uploaded in the thread when the message cannot hold it."""

from __future__ import annotations

import csv
import io

from bot.domain.spec import LaneRole
from bot.domain.stats import LaneResult
from bot.slack.views.lane_reason import reason_words
from bot.slack.views.report import ReportView, task_order

_BASE_COLUMNS = (
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
    "pair_counted",
    "pair_invalid",
)
# CSB's verdicts per lane, stored when it ended (empty: no trial, or not kept then), baseline then MCP.
VERDICT_FIELDS = (
    "manifest_status",
    "manifest_rule",
    "status_tool",
    "fingerprint",
    "category",
    "flags",
    "mcp_calls",
    "deep_search_calls",
    "contaminated",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_source",
    "timed_out",
    "unread",
)
COLUMNS = (*_BASE_COLUMNS, *(f"{lane}_{name}" for name in VERDICT_FIELDS for lane in ("baseline", "mcp")))


def csv_filename(view: ReportView) -> str:
    """Named after the run's folder, or after the run when it has one folder per suite."""
    name = view.output_dirs[0].rsplit("/", 1)[-1] if len(view.output_dirs) == 1 else f"run{view.run_id}"
    return f"{name}_tasks.csv"


def report_csv(view: ReportView) -> str:
    """Rows in the report's order. A lane the run did not run (single-lane runs) has empty cells;
    so does anything Harbor did not report. Tokens are input plus output; a reason is kept whole. Then
    whether the paired statistics counted the pair and the curation rules it broke, and every CSB verdict
    on each lane (`VERDICT_FIELDS`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for pair in task_order(view):
        baseline_lane = pair.baseline if view.single_lane in (None, LaneRole.BASELINE) else None
        mcp_lane = pair.mcp if view.single_lane in (None, LaneRole.MCP) else None
        baseline, mcp = _cells(baseline_lane), _cells(mcp_lane)
        counted = "" if view.single_lane else "yes" if pair.counted else "no"
        invalid = ";".join(f"{found.rule.value}:{found.lane}" for found in pair.invalid)
        writer.writerow(
            [
                pair.task_id,
                pair.suite,
                *baseline[:2],
                *mcp[:2],
                *_pairwise(baseline[2:], mcp[2:]),
                counted,
                invalid,
                *_pairwise(_verdict_cells(baseline_lane), _verdict_cells(mcp_lane)),
            ]
        )
    return out.getvalue()


def _verdict_cells(result: LaneResult | None) -> tuple[str, ...]:
    """CSB's verdicts on one lane as CSV cells, in `VERDICT_FIELDS` order."""
    verdict = result.verdict if result is not None else None
    if verdict is None:
        return ("",) * len(VERDICT_FIELDS)
    fingerprint = verdict.fingerprint
    return (
        verdict.manifest_status.value,
        verdict.manifest_rule.value if verdict.manifest_rule else "",
        verdict.status_tool.value,
        fingerprint.id if fingerprint else "",
        fingerprint.category.value if fingerprint and fingerprint.category else "",
        ";".join(f"{flag.severity}:{flag.rule}" for flag in verdict.flags),
        _number(verdict.mcp_calls),
        _number(verdict.deep_search_calls),
        "yes" if verdict.contaminated else "no",
        _number(verdict.tokens.input),
        _number(verdict.tokens.output),
        _number(verdict.tokens.cache_write),
        _number(verdict.tokens.cache_read),
        verdict.cost_source.value if verdict.cost_source else "",
        "yes" if verdict.timed_out else "no",
        "; ".join(verdict.unread),
    )


def _cells(result: LaneResult | None) -> tuple[str, str, str, str, str]:
    """Status, reward, cost, tokens and the whole reason of one lane as CSV cells."""
    if result is None:
        return "", "", "", "", ""
    tokens = None
    if result.input_tokens is not None or result.output_tokens is not None:
        tokens = (result.input_tokens or 0) + (result.output_tokens or 0)
    reason = reason_words(result) or ""
    return result.status.value, _number(result.reward), _number(result.cost_usd), _number(tokens), reason


def _number(value: float | None) -> str:
    return "" if value is None else str(value)


def _pairwise(baseline: tuple[str, ...], mcp: tuple[str, ...]) -> list[str]:
    """Baseline then MCP for each column."""
    return [cell for pair in zip(baseline, mcp, strict=True) for cell in pair]
