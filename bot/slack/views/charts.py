"""Charts for the thread, as PNG files with alt text and the numbers they are drawn from as CSV.

Drawn with matplotlib's Agg renderer on a `Figure` of its own (never pyplot's global state), so a chart
can be drawn in a worker thread while the event loop serves Slack. Colours are Okabe and Ito's
colour-blind-safe palette, and every mark that carries meaning also differs in shape (hatching,
marker), so the charts read in greyscale too. Sized for Slack's preview: 960 × 540 px.
Blocking (CPU): callers run these in a worker.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.domain.chart_data import (
    ComparisonRow,
    RewardPoint,
    SuiteRate,
    comparison_rows,
    reward_points,
    suite_rates,
)
from bot.domain.compare import Comparison
from bot.domain.coverage import Coverage
from bot.domain.mrkdwn import clip
from bot.domain.spend import DIMENSIONS, MonthSpend
from bot.domain.stats import PairOutcome

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 120  # 960 × 540 px
BASELINE_COLOUR = "#0072B2"  # blue
MCP_COLOUR = "#E69F00"  # orange
DIFF_COLOUR = "#009E73"  # bluish green
FLAG_COLOUR = "#D55E00"  # vermillion: disagreements, regressions
AGREE_COLOUR = "#999999"
ALT_TEXT_LIMIT = 1000  # Slack's alt_txt limit
POINT_AREA, MAX_POINT_AREA = 30, 900  # a task's area in the scatter; many tasks on one point stop growing


@dataclass(frozen=True)
class Chart:
    filename: str
    title: str
    alt_text: str
    png: bytes


def report_charts(run_id: int, pairs: Sequence[PairOutcome]) -> list[Chart]:
    """The report's two charts (none without a counted pair): pass rates per suite, rewards per task."""
    rates, points = suite_rates(pairs), reward_points(pairs)
    if not rates:
        return []
    return [
        Chart(
            f"run-{run_id}-pass-rates.png",
            f"Run #{run_id}: pass rate per suite",
            rates_alt_text(rates),
            png(rates_figure(rates, run_id)),
        ),
        Chart(
            f"run-{run_id}-rewards.png",
            f"Run #{run_id}: reward per task",
            rewards_alt_text(points),
            png(rewards_figure(points, run_id)),
        ),
    ]


def comparison_chart(result: Comparison, a: str, b: str) -> Chart | None:
    rows = comparison_rows(result)
    if not rows:
        return None
    return Chart(
        "comparison.png",
        f"{a} − {b}: pass rate per suite",
        comparison_alt_text(rows, a, b),
        png(comparison_figure(rows, a, b)),
    )


def png(figure: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


def rates_figure(rows: Sequence[SuiteRate], run_id: int) -> Figure:
    """Left: baseline and MCP pass rate per suite with Wilson intervals; right: MCP − baseline, interval."""
    figure = _figure()
    figure.subplots_adjust(
        left=0.08, right=0.98, bottom=0.27, top=0.92, wspace=0.6
    )  # fixed: quicker than a layout engine
    rates, diffs = figure.subplots(1, 2, width_ratios=(3, 2))
    lanes = (
        ([r.baseline_k for r in rows], [r.baseline_ci for r in rows]),
        ([r.mcp_k for r in rows], [r.mcp_ci for r in rows]),
    )
    heights = [[100 * k / r.n for k, r in zip(ks, rows, strict=True)] for ks, _ in lanes]
    errors = [
        [
            [h - 100 * ci[0] for h, ci in zip(lane_heights, cis, strict=True)],
            [100 * ci[1] - h for h, ci in zip(lane_heights, cis, strict=True)],
        ]
        for lane_heights, (_, cis) in zip(heights, lanes, strict=True)
    ]
    _lane_bars(rates, [r.suite for r in rows], heights, errors)
    rates.set_ylabel("pass rate (%), 95 % Wilson interval")
    rates.set_title(f"Run #{run_id}: pass rate per suite", fontsize=10)
    ys = range(len(rows))
    diffs.errorbar(
        [r.diff_pts for r in rows],
        list(ys),
        xerr=_xerr(rows),
        fmt="D",
        color=DIFF_COLOUR,
        ecolor="black",
        capsize=3,
    )
    diffs.axvline(0, color="black", linewidth=0.8)
    diffs.set_yticks(list(ys), [r.suite for r in rows], fontsize=8)
    diffs.invert_yaxis()
    diffs.set_xlim(-105, 105)
    diffs.set_xlabel("MCP − baseline (points, 95 % CI)")
    diffs.set_title("paired difference", fontsize=10)
    return figure


def rewards_figure(points: Sequence[RewardPoint], run_id: int) -> Figure:
    """Baseline reward against MCP reward per counted task; a point's area grows with the tasks on it."""
    from matplotlib.collections import PathCollection

    figure = _figure()
    figure.subplots_adjust(left=0.1, right=0.72, bottom=0.12, top=0.9)
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], color=AGREE_COLOUR, linewidth=0.8, linestyle="--", label="same reward")
    for disagree, name, colour, marker in (
        (False, "pass/fail agree", BASELINE_COLOUR, "o"),
        (True, "pass/fail disagree", FLAG_COLOUR, "X"),
    ):
        chosen = [p for p in points if p.disagree is disagree]
        if chosen:
            axes.scatter(
                [p.baseline for p in chosen],
                [p.mcp for p in chosen],
                s=[min(POINT_AREA * p.count, MAX_POINT_AREA) for p in chosen],
                c=colour,
                marker=marker,
                label=name,
                alpha=0.8,
                edgecolors="black",
                linewidths=0.5,
            )
    axes.set_xlim(-0.05, 1.05)
    axes.set_ylim(-0.05, 1.05)
    axes.set_aspect("equal")
    axes.set_xlabel("baseline reward")
    axes.set_ylabel("MCP reward")
    axes.set_title(f"Run #{run_id}: reward per task (area grows with the tasks on a point)", fontsize=10)
    legend = axes.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    for handle in legend.legend_handles:
        if isinstance(handle, PathCollection):
            handle.set_sizes([POINT_AREA * 2])
    return figure


def comparison_figure(rows: Sequence[ComparisonRow], a: str, b: str) -> Figure:
    """A − B in points per lane slot and suite with its interval; rows with regressions in vermillion."""
    figure = _figure()
    figure.subplots_adjust(left=0.42, right=0.97, bottom=0.12, top=0.92)
    axes = figure.subplots()
    ys = list(range(len(rows)))
    for flagged, colour, marker, name in (
        (False, DIFF_COLOUR, "D", "no regression"),
        (True, FLAG_COLOUR, "X", "has regressions"),
    ):
        chosen = [i for i, r in enumerate(rows) if (r.regressions > 0) is flagged]
        if chosen:
            axes.errorbar(
                [rows[i].diff_pts for i in chosen],
                chosen,
                xerr=_xerr([rows[i] for i in chosen]),
                fmt=marker,
                color=colour,
                ecolor="black",
                capsize=3,
                label=name,
            )
    axes.axvline(0, color="black", linewidth=0.8)
    labels = [f"{r.slot} · {r.suite} ({r.regressions} regr., {r.fixes} fix.)" for r in rows]
    axes.set_yticks(ys, labels, fontsize=8)
    axes.invert_yaxis()
    axes.set_xlim(-105, 105)
    axes.set_xlabel(f"{a} − {b} pass rate (points), 95 % interval")
    axes.set_title(f"{a} vs {b}", fontsize=10)
    axes.legend(fontsize=8, loc="lower right")
    return figure


def rates_alt_text(rows: Sequence[SuiteRate]) -> str:
    parts = [
        f"{r.suite}: baseline {r.baseline_k}/{r.n} ({100 * r.baseline_rate:.0f} %), MCP {r.mcp_k}/{r.n} "
        f"({100 * r.mcp_rate:.0f} %), difference {r.diff_pts:+.1f} points "
        f"[{r.diff_ci[0]:+.1f}, {r.diff_ci[1]:+.1f}]"
        for r in rows
    ]
    return clip(
        "Bar chart of pass rate per suite, baseline vs MCP, with 95 % intervals. " + "; ".join(parts),
        ALT_TEXT_LIMIT,
    )


def rewards_alt_text(points: Sequence[RewardPoint]) -> str:
    tasks = sum(p.count for p in points)
    disagree = sum(p.count for p in points if p.disagree)
    better = sum(p.count for p in points if p.mcp > p.baseline)
    worse = sum(p.count for p in points if p.mcp < p.baseline)
    return clip(
        f"Scatter of baseline reward (x) against MCP reward (y) for {tasks} counted tasks: "
        f"{better} above the diagonal (MCP higher), {worse} below, {tasks - better - worse} on it; "
        f"{disagree} where one lane passed and the other failed, marked with crosses.",
        ALT_TEXT_LIMIT,
    )


def comparison_alt_text(rows: Sequence[ComparisonRow], a: str, b: str) -> str:
    parts = [
        f"{r.slot} {r.suite}: {r.diff_pts:+.1f} points [{r.diff_ci[0]:+.1f}, {r.diff_ci[1]:+.1f}] "
        f"on {r.n} tasks, "
        f"{r.regressions} regressions, {r.fixes} fixes"
        for r in rows
    ]
    return clip(
        f"Chart of the pass-rate difference {a} − {b} per suite with 95 % intervals. " + "; ".join(parts),
        ALT_TEXT_LIMIT,
    )


def report_chart_csv(pairs: Sequence[PairOutcome]) -> str:
    """The numbers of both report charts: one row per suite, then one per reward point."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "chart",
            "suite",
            "n",
            "baseline_passed",
            "mcp_passed",
            "baseline_rate",
            "baseline_ci_low",
            "baseline_ci_high",
            "mcp_rate",
            "mcp_ci_low",
            "mcp_ci_high",
            "diff_pts",
            "diff_ci_low",
            "diff_ci_high",
        ]
    )
    for r in suite_rates(pairs):
        writer.writerow(
            [
                "pass_rates",
                r.suite,
                r.n,
                r.baseline_k,
                r.mcp_k,
                _f(r.baseline_rate),
                _f(r.baseline_ci[0]),
                _f(r.baseline_ci[1]),
                _f(r.mcp_rate),
                _f(r.mcp_ci[0]),
                _f(r.mcp_ci[1]),
                _f(r.diff_pts),
                _f(r.diff_ci[0]),
                _f(r.diff_ci[1]),
            ]
        )
    writer.writerow([])
    writer.writerow(["chart", "baseline_reward", "mcp_reward", "tasks", "pass_fail_disagree"])
    for p in reward_points(pairs):
        writer.writerow(["rewards", _f(p.baseline), _f(p.mcp), p.count, str(p.disagree).lower()])
    return out.getvalue()


def comparison_chart_csv(result: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["slot", "suite", "n", "diff_pts", "diff_ci_low", "diff_ci_high", "regressions", "fixes"])
    for r in comparison_rows(result):
        writer.writerow(
            [r.slot, r.suite, r.n, _f(r.diff_pts), _f(r.diff_ci[0]), _f(r.diff_ci[1]), r.regressions, r.fixes]
        )
    return out.getvalue()


def _lane_bars(
    axes: Axes,
    suites: list[str],
    heights: list[list[float]],
    errors: list[list[list[float]]] | None = None,
) -> None:
    """Per suite, the baseline bar and the hatched MCP bar side by side (percent, 0–105), each lane's
    `[below, above]` error bars when given, and the legend: the report's rates and coverage alike."""
    xs = range(len(suites))
    width = 0.38
    lanes = (("baseline", BASELINE_COLOUR, ""), ("MCP", MCP_COLOUR, "//"))
    for index, (name, colour, hatch) in enumerate(lanes):
        extra: dict[str, Any] = {"yerr": errors[index], "capsize": 3, "ecolor": "black"} if errors else {}
        axes.bar(
            [x + (index - 0.5) * width for x in xs],
            heights[index],
            width,
            label=name,
            color=colour,
            hatch=hatch,
            edgecolor="black",
            linewidth=0.5,
            **extra,
        )
    axes.set_xticks(list(xs), suites, rotation=30, ha="right", fontsize=8)
    axes.set_ylim(0, 105)
    axes.legend(fontsize=8, loc="lower right")


def _figure() -> Figure:
    """matplotlib is imported here, on the first chart, in the drawing process (`bot.slack.drawing`): the
    bot itself never draws, and importing it took a second of every bot's start-up."""
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH_IN, HEIGHT_IN), layout=None)


def _xerr(rows: Sequence[SuiteRate] | Sequence[ComparisonRow]) -> list[list[float]]:
    return [[r.diff_pts - r.diff_ci[0] for r in rows], [r.diff_ci[1] - r.diff_pts for r in rows]]


def _f(value: float) -> str:
    return f"{value:.6g}"


def coverage_chart(result: Coverage) -> Chart | None:
    """`/csb coverage`: per suite, the share of the target's runs done on each lane; None with no suite."""
    suites = result.suites[:COVERAGE_SUITES]
    if not suites:
        return None
    alt = "; ".join(
        f"{s.suite}: baseline {s.runs.baseline}/{s.expected}, MCP {s.runs.mcp}/{s.expected}" for s in suites
    )
    return Chart(
        "coverage.png",
        f"Coverage against {result.target} valid runs per task and lane",
        clip(
            f"Valid runs done per suite against the target ({result.target} per task and lane): {alt}",
            ALT_TEXT_LIMIT,
        ),
        png(coverage_figure(result)),
    )


COVERAGE_SUITES = 40  # one bar pair per suite stays readable at Slack's preview size up to about this many


def coverage_figure(result: Coverage) -> Figure:
    suites = result.suites[:COVERAGE_SUITES]
    figure = _figure()
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.3, top=0.9)
    axes = figure.subplots()
    done = ([s.runs.baseline for s in suites], [s.runs.mcp for s in suites])
    heights = [
        [100 * d / s.expected if s.expected else 0.0 for d, s in zip(lane, suites, strict=True)]
        for lane in done
    ]
    _lane_bars(axes, [s.suite for s in suites], heights)
    axes.set_ylabel(f"valid runs done (% of {result.target} per task)")
    axes.set_title(f"Coverage per suite against {result.target} valid runs per task and lane", fontsize=10)
    return figure


def coverage_chart_csv(result: Coverage) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "suite",
            "tasks",
            "target",
            "expected_runs",
            "baseline_runs",
            "mcp_runs",
            "baseline_needed",
            "mcp_needed",
        ]
    )
    for s in result.suites:
        writer.writerow(
            [
                s.suite,
                s.tasks,
                result.target,
                s.expected,
                s.runs.baseline,
                s.runs.mcp,
                s.deficit.baseline,
                s.deficit.mcp,
            ]
        )
    return out.getvalue()


SPEND_BARS = 8  # per panel, biggest first; the CSV has the rest
SPEND_HEIGHT_IN = 6.0  # 960 × 720 px: four panels need more height than one
LABEL_CHARS = 28


def spend_chart(spend: MonthSpend) -> Chart | None:
    """`/csb spend`: the month's cost by category, model, suite and config, four bar panels; None when
    no lane finished in the month (nothing to draw)."""
    if not spend.lanes:
        return None
    alt = "; ".join(
        f"{dimension}: "
        + ", ".join(f"{item.name} ${item.cost_usd:,.2f}" for item in spend.by[dimension][:SPEND_BARS])
        for dimension in DIMENSIONS
    )
    return Chart(
        f"spend-{spend.month}.png",
        f"Spend in {spend.month}: ${spend.cost_usd:,.2f}",
        clip(
            f"Recorded lane cost in {spend.month} (UTC), ${spend.cost_usd:,.2f} in all. {alt}", ALT_TEXT_LIMIT
        ),
        png(spend_figure(spend)),
    )


def spend_figure(spend: MonthSpend) -> Figure:
    figure = _figure()
    figure.set_size_inches(WIDTH_IN, SPEND_HEIGHT_IN)
    figure.subplots_adjust(left=0.2, right=0.97, bottom=0.08, top=0.9, wspace=0.75, hspace=0.45)
    figure.suptitle(f"Recorded lane cost in {spend.month} (UTC): ${spend.cost_usd:,.2f}", fontsize=10)
    for axes, dimension in zip(figure.subplots(2, 2).flat, DIMENSIONS, strict=True):
        items = list(spend.by[dimension][:SPEND_BARS])[::-1]  # the biggest at the top
        names = [_label(item.name) for item in items]
        axes.barh(names, [item.cost_usd for item in items], color=BASELINE_COLOUR, hatch="//")
        axes.set_title(f"by {dimension}", fontsize=9)
        axes.set_xlabel("US dollars", fontsize=8)
        axes.tick_params(labelsize=7)
    return figure


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else "…" + name[-(LABEL_CHARS - 1) :]


def spend_chart_csv(spend: MonthSpend) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["month", "dimension", "name", "lanes", "lanes_with_cost", "cost_usd"])
    for dimension in DIMENSIONS:
        for item in spend.by[dimension]:
            writer.writerow(
                [spend.month, dimension, item.name, item.lanes, item.priced, f"{item.cost_usd:.4f}"]
            )
    return out.getvalue()
