"""The charts: PNG files of the expected size, drawn from the report's own numbers, with alt text and CSV."""

from __future__ import annotations

import csv
import io
import struct

import pytest
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

from bot.domain.chart_data import ALL_SUITES, comparison_rows, reward_points, suite_rates
from bot.domain.compare import LaneChoice, Side, TaskResult, compare
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole
from bot.domain.stats import LaneResult, PairOutcome, summarize_by_suite
from bot.domain.verdict import ManifestStatus
from bot.slack.views.charts import (
    comparison_chart,
    comparison_chart_csv,
    rates_figure,
    report_chart_csv,
    report_charts,
    rewards_figure,
)

P, F, E = LaneStatus.PASSED, LaneStatus.FAILED, LaneStatus.ERRORED


def _pair(
    task: str, suite: str, base: tuple[LaneStatus, float], mcp: tuple[LaneStatus, float]
) -> PairOutcome:
    return PairOutcome(task, suite, LaneResult(base[0], base[1]), LaneResult(mcp[0], mcp[1]))


PAIRS = [
    _pair("fix-1", "csb_sdlc_fix", (P, 1.0), (P, 1.0)),
    _pair("fix-2", "csb_sdlc_fix", (F, 0.0), (P, 1.0)),
    _pair("fix-3", "csb_sdlc_fix", (F, 0.0), (P, 0.5)),
    _pair("fix-4", "csb_sdlc_fix", (E, 0.0), (P, 1.0)),  # errored: not counted, not drawn
    _pair("debug-1", "csb_sdlc_debug", (P, 0.8), (F, 0.0)),
    _pair("debug-2", "csb_sdlc_debug", (P, 1.0), (P, 1.0)),
]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_report_charts_are_pngs_of_slacks_preview_size_with_alt_text() -> None:
    charts = report_charts(7, PAIRS)
    assert [c.filename for c in charts] == ["run-7-pass-rates.png", "run-7-rewards.png"]
    for chart in charts:
        assert png_size(chart.png) == (960, 540)
        assert 0 < len(chart.alt_text) <= 1000
    assert "csb_sdlc_fix: baseline 1/3 (33 %), MCP 3/3 (100 %), difference +66.7 points" in charts[0].alt_text
    assert "5 counted tasks" in charts[1].alt_text and "3 where one lane passed" in charts[1].alt_text
    assert report_charts(7, [PAIRS[3]]) == []  # nothing counted: nothing drawn


def test_the_bars_are_the_reports_pass_rates() -> None:
    rows = suite_rates(PAIRS)
    report = summarize_by_suite(PAIRS)
    assert [r.suite for r in rows] == ["csb_sdlc_debug", "csb_sdlc_fix", ALL_SUITES]
    for row in rows[:2]:
        summary = report[row.suite]
        assert (row.n, row.baseline_k, row.mcp_k) == (summary.n, summary.baseline.k, summary.mcp.k)
        assert row.diff_pts == pytest.approx(summary.diff_pts)
        assert row.baseline_ci[0] <= row.baseline_rate <= row.baseline_ci[1]
    figure = rates_figure(rows, 7)
    bars = [p for p in figure.axes[0].patches if isinstance(p, Rectangle)]
    heights = [round(b.get_height(), 6) for b in bars]
    expected = [round(100 * r.baseline_rate, 6) for r in rows] + [round(100 * r.mcp_rate, 6) for r in rows]
    assert heights == expected
    (diff_line, *_) = figure.axes[1].lines
    assert list(diff_line.get_xdata()) == pytest.approx([r.diff_pts for r in rows])


def test_the_scatter_is_the_reports_rewards() -> None:
    points = reward_points(PAIRS)
    figure = rewards_figure(points, 7)
    drawn = sorted(
        (tuple(xy), size)
        for c in figure.axes[0].collections
        if isinstance(c, PathCollection)
        for xy, size in zip(c.get_offsets().tolist(), c.get_sizes().tolist(), strict=True)
    )
    # A point per counted task at its (baseline, MCP) reward; fix-1 and debug-2 share (1, 1): twice the area.
    assert drawn == [((0.0, 0.5), 30.0), ((0.0, 1.0), 30.0), ((0.8, 0.0), 30.0), ((1.0, 1.0), 60.0)]


def test_the_csv_holds_the_plotted_numbers() -> None:
    rows = list(csv.reader(io.StringIO(report_chart_csv(PAIRS))))
    rates = {r[1]: r for r in rows if r and r[0] == "pass_rates"}
    assert rates["csb_sdlc_fix"][2:5] == ["3", "1", "3"] and float(
        rates["csb_sdlc_fix"][11]
    ) == pytest.approx(66.6667)
    rewards = [r for r in rows if r and r[0] == "rewards"]
    assert ["rewards", "1", "1", "2", "false"] in rewards and ["rewards", "0", "0.5", "1", "true"] in rewards


def _side(label: str, outcomes: dict[str, ManifestStatus]) -> Side:
    return Side(
        label,
        tuple(
            TaskResult(
                task,
                "csb_sdlc_fix",
                "baseline-local-direct",
                LaneRole.BASELINE,
                status,
                float(status is ManifestStatus.PASSED),
            )
            for task, status in outcomes.items()
        ),
    )


def test_the_comparison_chart_is_a_minus_b_with_regressions() -> None:
    p, f = ManifestStatus.PASSED, ManifestStatus.FAILED
    result = compare(
        _side("#2", {"a": f, "b": f, "c": p}),
        _side("#1", {"a": p, "b": p, "c": p}),
        LaneChoice.CONFIG,
        resamples=100,
    )
    (row,) = comparison_rows(result)
    assert (row.n, row.regressions, row.fixes) == (3, 2, 0) and row.diff_pts == pytest.approx(-200 / 3)
    chart = comparison_chart(result, "run #2", "run #1")
    assert chart is not None and png_size(chart.png) == (960, 540)
    assert "-66.7 points" in chart.alt_text and "2 regressions" in chart.alt_text
    assert "baseline-local-direct,csb_sdlc_fix,3,-66.6667," in comparison_chart_csv(result)
