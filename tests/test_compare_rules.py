"""Comparison rules on fixtures: CSB's MANIFEST task key, pairing, validity, flips and the statistics.

Side B is the real MANIFEST excerpt (`tests/fixtures/csb/MANIFEST.truncated.json`, `ccb_design`); side A is
the same tasks with planted changes, so every expected number below is worked out by hand from the file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bot.csb.official_side import QUALITY_ISSUES, NoManifest, official_side, read_manifest
from bot.domain.compare import OVERALL, FlipKind, LaneChoice, Side, TaskResult, compare, group_stats
from bot.domain.intervals import paired_diff_interval, wilson_interval
from bot.domain.manifest_names import manifest_task_key
from bot.domain.spec import LaneRole
from bot.domain.verdict import ManifestStatus

FIXTURES = Path(__file__).parent / "fixtures" / "csb"
SUITE = "ccb_design"
CONFIG = "baseline-local-direct"
P, F, E = ManifestStatus.PASSED, ManifestStatus.FAILED, ManifestStatus.ERRORED


def _manifest() -> dict[str, object]:
    data: dict[str, object] = json.loads((FIXTURES / "MANIFEST.truncated.json").read_text())
    return data


def _official() -> Side:
    return official_side(_manifest(), {SUITE}, {CONFIG})


def _result(
    task: str, status: ManifestStatus, reward: float, *, invalid: str | None = None, config: str = CONFIG
) -> TaskResult:
    role = LaneRole.MCP if config.startswith("mcp-") else LaneRole.BASELINE
    return TaskResult(task, SUITE, config, role, status, reward, cost_usd=0.5, invalid=invalid)


# The planted changes against the official entries of ccb_design/baseline-local-direct.
PLANTED = {
    "django-modeladmin-impact-001": (F, 0.0),  # regression (official passed 1.0)
    "envoy-stream-aggregated-sym-001": (F, 0.0),  # regression (0.57)
    "k8s-typemeta-dep-chain-001": (F, 0.0),  # regression (0.33)
    "etcd-grpc-api-upgrade-001": (P, 0.5),  # fix (official failed 0.0)
    "flink-checkpoint-arch-001": (E, 0.0),  # a new error (official passed 0.8)
}
CONTAMINATED = "k8s-scheduler-arch-001"  # passed, but not a result: the baseline called an MCP tool
MISSING_IN_A = "camel-routing-arch-001"
ONLY_IN_A = "brand-new-task-001"
COPY_NAMED = "kafka-flink-streaming-arch-001"  # A names it by its task copy, `bl_<task>_<6>`


def _run_side() -> Side:
    results = []
    for official in _official().results:
        if official.task == MISSING_IN_A:
            continue
        status, reward = PLANTED.get(official.task, (official.status, official.reward or 0.0))
        name = f"bl_{official.task}_x1y2z3" if official.task == COPY_NAMED else official.task
        invalid = "baseline_contaminated" if official.task == CONTAMINATED else None
        results.append(_result(name, status, reward, invalid=invalid))
    results.append(_result(ONLY_IN_A, P, 1.0))
    return Side(
        "#7", tuple(results), model="anthropic/claude-sonnet-4-6", agent="claude-code", spec_hash="abc"
    )


def test_manifest_task_key_is_generate_manifests_rule() -> None:
    assert manifest_task_key("ccx-agentic-082") == "CCX-agentic-082"  # F1
    assert manifest_task_key("mcp_ccx-agentic-082_ef3x9y") == "CCX-agentic-082"  # F2 pairs with F1
    assert manifest_task_key("bl_django-orm-query-arch-001_Ab12Cd") == "django-orm-query-arch-001"
    assert manifest_task_key("sgonly_django-orm-query-arch-001") == "django-orm-query-arch-001"
    assert manifest_task_key("instance_ansible-ansible-1234") == "instance_ansible__ansible-1234"
    assert manifest_task_key("instance_ansible__ansible-1234") == "instance_ansible__ansible-1234"
    assert manifest_task_key("camel-routing-arch-001") == "camel-routing-arch-001"


def test_official_side_reads_the_manifests_suite_and_config() -> None:
    side = _official()
    assert side.label == "official" and side.model == "anthropic/claude-haiku-4-5-20251001"
    assert len(side.results) == 20
    assert sum(r.passed for r in side.results) == 19
    assert {r.config for r in side.results} == {CONFIG}
    assert official_side(_manifest(), {"csb_sdlc_fix"}, None).results == ()
    assert {r.config for r in official_side(_manifest(), {SUITE}, None).results} == {"baseline", CONFIG}


def test_a_flagged_official_task_is_not_a_result(tmp_path: Path) -> None:
    manifest = {
        "runs": {
            f"{SUITE}/{CONFIG}": {
                "tasks": {"t-001": {"status": "passed", "reward": 1.0, "has_quality_issues": True}}
            }
        }
    }
    (result,) = official_side(manifest, {SUITE}, None).results
    assert result.invalid == QUALITY_ISSUES and not result.counts
    with pytest.raises(NoManifest):
        read_manifest(tmp_path)


def test_planted_flips_come_out_regressions_first() -> None:
    result = compare(_run_side(), _official())
    assert [p.key for p in result.of_kind(FlipKind.REGRESSION)] == [
        "django-modeladmin-impact-001",
        "envoy-stream-aggregated-sym-001",
        "k8s-typemeta-dep-chain-001",
    ]
    assert [p.key for p in result.of_kind(FlipKind.FIX)] == ["etcd-grpc-api-upgrade-001"]
    assert [p.key for p in result.of_kind(FlipKind.NEW_ERROR)] == ["flink-checkpoint-arch-001"]
    assert [f.kind for f in result.flips] == [FlipKind.REGRESSION] * 3 + [FlipKind.FIX, FlipKind.NEW_ERROR]
    # Paired by the MANIFEST's key: the task copy's name pairs with the official task.
    assert any(p.key == COPY_NAMED and p.counted for p in result.pairs)
    assert result.only_a == ((CONFIG, ONLY_IN_A),)
    assert result.only_b == ((CONFIG, MISSING_IN_A),)
    assert {p.key for p in result.excluded} == {"flink-checkpoint-arch-001", CONTAMINATED}


def test_statistics_worked_out_by_hand() -> None:
    stats = compare(_run_side(), _official()).overall
    # 19 shared tasks, less the errored and the contaminated one.
    assert stats.n == 17
    assert (stats.k_b, stats.k_a) == (16, 14)  # etcd is official's only failure among them
    assert (stats.regressions, stats.fixes) == (3, 1)
    assert stats.diff_pts == pytest.approx(100 * (14 - 16) / 17)
    assert stats.p_value == pytest.approx(0.625)  # 2 · (C(4,0) + C(4,1)) / 2^4
    assert stats.mean_diff == pytest.approx((-1.0 - 0.57 - 0.33 + 0.5) / 17)
    assert stats.mean_ci is not None and stats.mean_ci[0] < stats.mean_diff < stats.mean_ci[1]
    assert stats.diff_ci is not None and stats.diff_ci[0] < stats.diff_pts < stats.diff_ci[1]
    assert stats.cost_a == pytest.approx(0.5) and stats.cost_b is None  # the MANIFEST has no cost
    by_suite = compare(_run_side(), _official()).by_slot[CONFIG]
    assert set(by_suite) == {SUITE, OVERALL} and by_suite[SUITE] == by_suite[OVERALL]


def test_every_group_has_the_statistics_it_has_alone() -> None:
    """The intervals are drawn for all groups at once: each group's figures are those `group_stats` gives
    the group by itself, in both pairings (by config: one slot, whose overall is the comparison's)."""
    for lanes in (LaneChoice.CONFIG, LaneChoice.BOTH):
        result = compare(_run_side(), _official(), lanes, resamples=2_000)
        assert result.overall == group_stats(result.pairs, 2_000)
        assert result.overall.mean_ci is not None
        for slot, groups in result.by_slot.items():
            in_slot = [p for p in result.pairs if p.slot == slot]
            assert groups[OVERALL] == group_stats(in_slot, 2_000)
            for suite, stats in groups.items():
                if suite != OVERALL:
                    assert stats == group_stats([p for p in in_slot if p.suite == suite], 2_000)
    assert compare(_run_side(), _official(), resamples=0).overall.mean_ci is None


def test_the_header_says_what_differs() -> None:
    differs = {d.name: (d.a, d.b) for d in compare(_run_side(), _official()).differs}
    assert differs == {
        "model": ("anthropic/claude-sonnet-4-6", "anthropic/claude-haiku-4-5-20251001"),
        "agent": ("claude-code", None),
        "spec hash": ("abc", None),
    }


def test_lanes_pair_by_config_unless_told_by_role() -> None:
    run = Side(
        "#8",
        (
            _result("t-001", P, 1.0, config="mcp-remote-direct"),
            _result("t-001", F, 0.0, config="baseline-local-direct"),
        ),
    )
    other = Side(
        "#9",
        (
            _result("t-001", F, 0.0, config="mcp-remote-artifact"),
            _result("t-001", F, 0.0, config="baseline-local-direct"),
        ),
    )
    by_config = compare(run, other)
    assert [p.slot for p in by_config.pairs] == ["baseline-local-direct"]
    assert set(by_config.only_a) == {("mcp-remote-direct", "t-001")}
    mcp = compare(run, other, LaneChoice.MCP)
    assert [p.slot for p in mcp.pairs] == ["mcp"] and [f.kind for f in mcp.flips] == [FlipKind.FIX]
    both = compare(run, other, LaneChoice.BOTH)
    assert sorted(p.slot for p in both.pairs) == ["baseline", "mcp"] and both.differs[0].name == "config"


def test_significance_needs_more_regressions_and_a_small_p() -> None:
    passed = tuple(_result(f"t-{i:03}", P, 1.0) for i in range(12))
    failed = tuple(_result(f"t-{i:03}", F, 0.0) for i in range(12))
    worse = compare(Side("#2", failed), Side("#1", passed), resamples=200)
    assert worse.overall.p_value == pytest.approx(2 / 2**12) and worse.significant_regression(0.05)
    assert not compare(Side("#2", passed), Side("#1", failed), resamples=200).significant_regression(0.05)
    assert not compare(_run_side(), _official()).significant_regression(0.05)


def test_wilson_interval_known_values() -> None:
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-4))
    assert wilson_interval(10, 10) == (pytest.approx(0.7225, abs=1e-4), 1.0)
    low, high = wilson_interval(5, 10) or (0, 0)
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson_interval(0, 0) is None


def test_paired_difference_interval() -> None:
    # No discordant pair: the difference is 0 and the interval is about it.
    low, high = paired_diff_interval(5, 0, 0, 5) or (1, 1)
    assert low < 0 < high
    # Swapping the sides negates the interval.
    forward = paired_diff_interval(12, 9, 2, 21)
    backward = paired_diff_interval(12, 2, 9, 21)
    assert forward is not None and backward is not None
    assert forward == pytest.approx((-backward[1], -backward[0]))
    assert forward[0] < 7 / 44 < forward[1] and forward[0] >= -1 and forward[1] <= 1
    assert all(-1 <= x <= 1 for x in paired_diff_interval(0, 10, 0, 0) or ())
    assert paired_diff_interval(0, 0, 0, 0) is None
    assert math.isclose(sum(paired_diff_interval(3, 0, 0, 0) or ()), 0.0, abs_tol=1e-12)
