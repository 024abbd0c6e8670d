"""The pairing rule's counterpart search, on `runs/` trees built from the real trial result and MANIFEST."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from csb_tree import build_tree, fixture_json, write_json

from bot.csb import Catalog, counterpart_config, missing_counterparts
from bot.csb.counterparts import normalise_task_name
from bot.domain.spec import DEFAULT_MODEL, Mode, RunParams, RunSpec

SONNET = "anthropic/claude-sonnet-4-6"
DESIGN = [  # the tasks of suite csb_sdlc_design in the truncated suite file
    "camel-routing-arch-001",
    "django-orm-query-arch-001",
    "etcd-grpc-api-upgrade-001",
    "postgres-query-exec-arch-001",
]
JOB = "2026-02-23__17-58-13"  # Harbor's job folder; its `__` must not make it look like a trial
LONG_TASK = "kubernetes-scheduler-preemption-victim-selection-001"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def _spec(repo: Path, mode: Mode, **params: Any) -> RunSpec:
    params.setdefault("suite", "csb_sdlc_design")
    return Catalog(repo).resolve(RunParams(mode=mode, **params), default_parallel=4)


def _trial(
    repo: Path,
    run: str,
    lane: str,
    task_id: str,
    *,
    model: str = DEFAULT_MODEL,
    folder: str | None = None,
    **changes: Any,
) -> Path:
    """A trial result.json made from the real one, moved to another task, model or outcome."""
    data = fixture_json("result_trial_pass.json")
    data["task_name"] = task_id
    data["config"]["agent"]["model_name"] = model
    data.update(changes)
    trial = folder or f"{task_id[:32]}__AbC1234"
    return write_json(repo, f"runs/{run}/{lane}/{JOB}/{trial}/result.json", data)


def _manifest(repo: Path, keep: set[str] | None = None, **status: str) -> None:
    data = fixture_json("MANIFEST.truncated.json")
    if keep is not None:
        data["runs"] = {key: run for key, run in data["runs"].items() if key in keep}
    for run in data["runs"].values():
        for task_id, value in status.items():
            if task_id in run["tasks"]:
                run["tasks"][task_id]["status"] = value
    write_json(repo, "runs/official/MANIFEST.json", data)


def test_paired_needs_no_counterparts(repo: Path) -> None:
    assert counterpart_config(repo, _spec(repo, Mode.PAIRED)) is None
    assert missing_counterparts(repo, _spec(repo, Mode.PAIRED)) == []


def test_counterpart_lane_is_the_other_side_of_the_same_full_config(repo: Path) -> None:
    assert counterpart_config(repo, _spec(repo, Mode.BASELINE_ONLY)) == "mcp-remote-direct"
    assert counterpart_config(repo, _spec(repo, Mode.FULL_ONLY)) == "baseline-local-direct"
    artifact = _spec(repo, Mode.FULL_ONLY, full_config="mcp-remote-artifact")
    assert counterpart_config(repo, artifact) == "baseline-local-artifact"
    legacy = _spec(repo, Mode.BASELINE_ONLY, full_config="sourcegraph_full")
    assert counterpart_config(repo, legacy) == "sourcegraph_full"  # CSB names the lane folder so


def test_without_results_every_task_lacks_one_in_spec_order(repo: Path) -> None:
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == DESIGN


def test_baseline_only_finds_clean_mcp_trials_under_any_run_name(repo: Path) -> None:
    camel, django, etcd, postgres = DESIGN
    _trial(repo, "staging/csb_sdlc_design_haiku_20260301_101010", "mcp-remote-direct", camel)
    _trial(repo, "official/_raw/ccb_design_haiku_20260223_175813", "mcp-remote-direct", django)
    failed = {"verifier_result": {"rewards": {"reward": 0.0}}}
    _trial(repo, "staging/older/ccb_design_haiku_x", "mcp-remote-direct", postgres, **failed)
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == [etcd]


def test_trials_that_are_not_clean_counterparts_do_not_count(repo: Path) -> None:
    camel, django, etcd, postgres = DESIGN
    errored = {"exception_info": {"exception_type": "NonZeroAgentExitCodeError", "exception_message": "x"}}
    _trial(repo, "staging/a", "mcp-remote-direct", camel, **errored)
    _trial(repo, "staging/b", "mcp-remote-direct", django, model=SONNET)
    _trial(repo, "staging/c", "baseline-local-direct", etcd)  # the same lane, not the other one
    _trial(repo, "staging/d", "mcp-remote-artifact", etcd)  # another full config
    _trial(repo, "staging/e", "mcp-remote-direct", postgres, finished_at=None)  # still being written
    _trial(repo, "experimental/f", "mcp-remote-direct", postgres)  # neither staging nor official
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == DESIGN


def test_model_must_match_the_spec(repo: Path) -> None:
    _trial(repo, "staging/a", "mcp-remote-direct", DESIGN[0], model=SONNET)
    assert DESIGN[0] not in missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY, model=SONNET))
    assert DESIGN[0] in missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY))


def test_trial_of_another_task_sharing_the_folder_prefix_does_not_count(repo: Path) -> None:
    _trial(
        repo,
        "staging/a",
        "mcp-remote-direct",
        "camel-routing-arch-001-v2",
        folder="camel-routing-arch-001__AbC1234",
    )
    assert DESIGN[0] in missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY))


def test_long_task_ids_match_harbors_cut_folder_names(repo: Path) -> None:
    selection = {"tasks": [{"task_id": LONG_TASK, "benchmark": "csb_sdlc_fix"}]}
    write_json(repo, "configs/long.json", selection)
    spec = _spec(repo, Mode.FULL_ONLY, suite=None, selection_file="configs/long.json")
    assert missing_counterparts(repo, spec) == [LONG_TASK]
    cut = LONG_TASK[:32].rstrip("_-")  # newer Harbor strips the separator left at the cut
    _trial(repo, "staging/a", "baseline-local-direct", LONG_TASK, folder=f"{cut}__Zz9Yy8X")
    assert missing_counterparts(repo, spec) == []


def test_full_only_reads_the_official_manifest(repo: Path) -> None:
    _manifest(repo)
    assert missing_counterparts(repo, _spec(repo, Mode.FULL_ONLY)) == []  # etcd's `failed` is clean
    assert missing_counterparts(repo, _spec(repo, Mode.FULL_ONLY, model=SONNET)) == DESIGN
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == DESIGN


def test_manifest_errored_entries_do_not_count(repo: Path) -> None:
    _manifest(repo, **{"etcd-grpc-api-upgrade-001": "errored"})
    assert missing_counterparts(repo, _spec(repo, Mode.FULL_ONLY)) == ["etcd-grpc-api-upgrade-001"]


def test_manifest_older_lane_names_map_to_composite_ones(repo: Path) -> None:
    _manifest(repo, keep={"ccb_design/baseline"})
    assert missing_counterparts(repo, _spec(repo, Mode.FULL_ONLY)) == [
        "camel-routing-arch-001",
        "etcd-grpc-api-upgrade-001",
    ]


def test_manifest_and_trials_combine(repo: Path) -> None:
    _manifest(repo, keep={"ccb_design/baseline"})
    _trial(repo, "staging/a", "baseline-local-direct", "etcd-grpc-api-upgrade-001")
    assert missing_counterparts(repo, _spec(repo, Mode.FULL_ONLY)) == ["camel-routing-arch-001"]


def test_unreadable_files_are_skipped(repo: Path) -> None:
    (repo / "runs" / "official").mkdir(parents=True)
    (repo / "runs" / "official" / "MANIFEST.json").write_text("{not json")
    broken = _trial(repo, "staging/a", "mcp-remote-direct", DESIGN[0])
    broken.write_text("")
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == DESIGN


def test_task_copies_and_timed_out_but_scored_trials_count(repo: Path) -> None:
    """MCP trials run from `mcp_<task>_<6>` copies (CSB's names) and scored timeouts are counterparts."""
    camel, django, etcd, postgres = DESIGN
    _trial(repo, "staging/a", "mcp-remote-direct", camel, folder="mcp_camel-routing-arch-001_x1y2z3__AbC1234")
    data_name = {"task_name": "mcp_camel-routing-arch-001_x1y2z3"}
    _trial(repo, "staging/b", "mcp-remote-direct", django)
    scored = {
        "exception_info": {"exception_type": "AgentTimeoutError", "exception_message": "late"},
        "verifier_result": {"rewards": {"reward": 0.0}},
    }
    _trial(repo, "staging/c", "mcp-remote-direct", etcd, **scored)
    _trial(
        repo, "staging/d", "mcp-remote-direct", postgres, folder="sgonly_postgres-query-exec-arch__AbC1234"
    )
    path = next((repo / "runs/staging/a").rglob("result.json"))
    data = json.loads(path.read_text())
    data.update(data_name)
    path.write_text(json.dumps(data))
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == []


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("mcp_camel-routing-arch-001_x1y2z3", "camel-routing-arch-001"),
        ("bl_camel-routing-arch-001_ab12cd", "camel-routing-arch-001"),
        ("sgonly_camel-routing-arch-001", "camel-routing-arch-001"),
        ("sdlc_design_camel-routing-arch-001", "camel-routing-arch-001"),
        ("camel-routing-arch-001", "camel-routing-arch-001"),
        ("plain_task_abcdef", "plain_task_abcdef"),  # no `-`: CSB keeps the suffix
    ],
)
def test_task_names_are_normalised_as_csb_does(name: str, task: str) -> None:
    assert normalise_task_name(name) == task


def test_a_hostile_result_or_manifest_is_skipped_not_fatal(repo: Path) -> None:
    camel, django, etcd, postgres = DESIGN
    deep = "[" * 100_000 + "]" * 100_000
    spoiled = _trial(repo, "staging/a", "mcp-remote-direct", camel)
    spoiled.write_text(f'{{"task_name": "{camel}", "x": {deep}}}')
    infinite = _trial(repo, "staging/b", "mcp-remote-direct", django)
    infinite.write_text(infinite.read_text().replace('"reward": 0.9429', '"reward": Infinity'))
    _trial(repo, "staging/c", "mcp-remote-direct", etcd)
    (repo / "runs/official/MANIFEST.json").parent.mkdir(parents=True, exist_ok=True)
    (repo / "runs/official/MANIFEST.json").write_text(deep)
    assert missing_counterparts(repo, _spec(repo, Mode.BASELINE_ONLY)) == [camel, django, postgres]
