"""Coverage, deficits and variance waves by CSB's `plan_variance_runs.py` rules, on the real MANIFEST
excerpt (F10) and selection file of tests/fixtures/csb, with the expected numbers written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.csb.coverage_files import NoManifest, manifest_history, read_selection
from bot.csb.verdicts.config_names import is_mcp_config
from bot.domain.coverage import (
    RunCounts,
    SelectedTask,
    WaveMode,
    count_runs,
    coverage,
    plan_waves,
    task_gaps,
)
from bot.domain.errors import UserInputError
from bot.domain.spec import LaneRole
from bot.services.coverage_args import button_values, coverage_words, parse_coverage_args

FIXTURES = Path(__file__).parent / "fixtures" / "csb"


def _counts(
    rows: list[tuple[str, str, str, int]],
) -> tuple[dict[tuple[str, str], RunCounts], tuple[str, ...]]:
    return count_runs(rows, {config: is_mcp_config(config) for _s, config, _t, _n in rows})


def test_the_planner_merges_configs_into_two_sides_and_lowercases_task_ids() -> None:
    counts, extended = _counts(
        [
            ("csb_sdlc_fix", "baseline", "Fix-001", 1),
            ("csb_sdlc_fix", "baseline-local-direct", "fix-001", 2),
            ("csb_sdlc_fix", "baseline-local-artifact", "fix-001", 1),
            ("csb_sdlc_fix", "mcp-remote-direct", "fix-001", 2),
            ("csb_sdlc_fix", "mcp", "fix-001", 1),  # CSB's planner counts a bare `mcp` ...
            ("csb_sdlc_fix", "github_full", "fix-001", 5),  # ... and neither side of this one
        ]
    )
    assert counts == {("csb_sdlc_fix", "fix-001"): RunCounts(baseline=4, mcp=3)}
    assert extended == ()


def test_mcp_configs_csb_does_not_count_are_counted_and_named() -> None:
    counts, extended = _counts(
        [
            ("s", "sourcegraph_full", "t", 2),
            ("s", "mcp-scip-remote-direct", "t", 1),
            ("s", "baseline", "t", 0),
        ]
    )
    assert counts == {("s", "t"): RunCounts(baseline=0, mcp=3)}
    assert extended == ("mcp-scip-remote-direct", "sourcegraph_full")


def _task(task_id: str, suite: str = "s", index: int = 0) -> SelectedTask:
    return SelectedTask(suite=suite, task_id=task_id, index=index)


def test_waves_follow_the_planner_both_then_one_sided_and_stop_at_the_first_empty_wave() -> None:
    tasks = [_task("a", index=0), _task("b", index=1), _task("c", index=2), _task("d", index=3)]
    counts = {
        ("s", "a"): RunCounts(baseline=0, mcp=0),  # deficits 3/3
        ("s", "b"): RunCounts(baseline=2, mcp=0),  # deficits 1/3
        ("s", "c"): RunCounts(baseline=3, mcp=1),  # deficits 0/2
        ("s", "d"): RunCounts(baseline=3, mcp=3),  # at target
    }
    gaps = task_gaps(tasks, counts, 3)
    assert [(g.task.task_id, g.baseline_deficit, g.mcp_deficit) for g in gaps] == [
        ("a", 3, 3),
        ("b", 1, 3),
        ("c", 0, 2),
    ]
    waves = [(w.number, w.mode, [t.task_id for t in w.tasks], w.lanes) for w in plan_waves(gaps, 3)]
    assert waves == [
        (1, WaveMode.BOTH, ["a", "b"], 4),
        (1, WaveMode.MCP_ONLY, ["c"], 1),
        (2, WaveMode.BOTH, ["a"], 2),
        (2, WaveMode.MCP_ONLY, ["b", "c"], 2),
        (3, WaveMode.BOTH, ["a"], 2),
        (3, WaveMode.MCP_ONLY, ["b"], 1),
    ]
    assert plan_waves(task_gaps(tasks[3:], counts, 3), 3) == ()


def test_suite_coverage_counts_runs_up_to_the_target_and_lists_tasks_without_any() -> None:
    tasks = [_task("a", "x", 0), _task("b", "x", 1), _task("c", "y", 2)]
    counts = {("x", "a"): RunCounts(baseline=5, mcp=1), ("y", "c"): RunCounts(baseline=0, mcp=2)}
    result = coverage(tasks, counts, 3)
    x, y = result.suites
    assert (x.suite, x.tasks, x.expected, x.runs, x.deficit) == ("x", 2, 6, RunCounts(3, 1), RunCounts(3, 5))
    assert x.without == {LaneRole.BASELINE: ("b",), LaneRole.MCP: ("b",)}
    assert (y.runs, y.deficit, y.without[LaneRole.BASELINE], y.without[LaneRole.MCP]) == (
        RunCounts(0, 2),
        RunCounts(3, 1),
        ("c",),
        (),
    )


def test_the_real_manifest_history_and_selection_read_as_csb_reads_them(tmp_path: Path) -> None:
    (tmp_path / "runs" / "official").mkdir(parents=True)
    shutil.copy(FIXTURES / "MANIFEST_F10.json", tmp_path / "runs" / "official" / "MANIFEST.json")
    official = manifest_history(tmp_path)
    rows = official.rows
    assert rows == [("ccb_understand", "mcp-remote-direct", "numpy-dtype-localize-001", 2)]
    assert official.run_dirs == {"understand_haiku_20260224_001815", "understand_haiku_20260225_211346"}
    (tmp_path / "configs").mkdir()
    selection = json.loads((FIXTURES / "selection_cgen_rerun.json").read_text())
    selection["tasks"].append({"task_id": "numpy-dtype-localize-001", "benchmark": "ccb_understand"})
    selection["tasks"].append({"task_id": "gone-001", "benchmark": "ccb_understand", "excluded": True})
    selection["tasks"].append({"task_id": "mcp-only-001", "mcp_suite": "ccb_mcp_x"})
    (tmp_path / "configs" / "selected_benchmark_tasks.json").write_text(json.dumps(selection))
    read = read_selection(tmp_path)
    assert [(t.suite, t.task_id, t.index) for t in read.tasks] == [
        ("csb_sdlc_build", "cgen-deps-install-001", 0),
        ("ccb_understand", "numpy-dtype-localize-001", 1),
        ("ccb_mcp_x", "mcp-only-001", 3),
    ]
    assert read.excluded == 1 and read.entries[0] == selection["tasks"][0]
    counts, _ = _counts(rows)
    result = coverage(read.tasks, counts, 3)
    assert [(g.task.task_id, g.baseline_deficit, g.mcp_deficit) for g in result.gaps] == [
        ("cgen-deps-install-001", 3, 3),
        ("numpy-dtype-localize-001", 3, 1),
        ("mcp-only-001", 3, 3),
    ]


def test_files_coverage_cannot_use_are_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(NoManifest):
        manifest_history(tmp_path)
    manifest = tmp_path / "runs" / "official" / "MANIFEST.json"
    manifest.parent.mkdir(parents=True)
    for text, words in (
        ("{not json", "cannot be read"),
        ('{"run_history": []}', "no `run_history` object"),
        ('{"run_history": {"s/c": {"t": {"n_runs": "2"}}}}', "has no whole `n_runs`"),
        ('{"run_history": {"s/c": 7}}', "is not an object of tasks"),
    ):
        manifest.write_text(text)
        with pytest.raises(UserInputError, match=words) as caught:
            manifest_history(tmp_path)
        assert "\n" not in caught.value.message
    manifest.write_text('{"run_history": {"legacy-key": {"t": {"n_runs": 1}}, "a/b/c": {}}}')
    assert manifest_history(tmp_path).rows == []  # keys not `suite/config` are ignored, as the planner does
    with pytest.raises(UserInputError, match=r"has no `configs/selected_benchmark_tasks\.json`"):
        read_selection(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "selected_benchmark_tasks.json").write_text('{"suites": {}}')
    with pytest.raises(UserInputError, match="has no `tasks` list"):
        read_selection(tmp_path)


@pytest.mark.parametrize(
    "text",
    ["", "csb_sdlc_fix csb_sdlc_debug --model sonnet --target 2 --staging --fill", "--target 5 --plan"],
)
def test_a_button_value_asks_the_question_it_was_made_from(text: str) -> None:
    args = parse_coverage_args(text)
    assert parse_coverage_args(coverage_words(args)) == args


def test_the_buttons_offered_and_their_values_within_slacks_limit() -> None:
    args = parse_coverage_args("csb_sdlc_fix --target 2")
    assert button_values(args, fill=True, plan=True) == (
        "csb_sdlc_fix --target 2 --fill",
        "csb_sdlc_fix --target 2 --plan",
    )
    assert button_values(args, fill=False, plan=True) == ("csb_sdlc_fix --target 2 --plan",)
    assert button_values(args, fill=False, plan=False) == ()
    many = parse_coverage_args(" ".join(f"suite_{n:04d}" for n in range(300)))  # 3,000 characters of suites
    assert button_values(many, fill=True, plan=True) == ()  # the flags still ask it; no button too long
