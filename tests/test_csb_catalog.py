"""The catalog on small CSB-shaped checkouts built from the real suite and selection files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from csb_tree import (
    CANONICAL,
    CGEN_LEGACY_FOLDER,
    CGEN_PATH,
    DEBUG_FOLDER,
    DEBUG_PATH,
    FIXTURES,
    SUITE_FIXTURE,
    build_tree,
    fixture_json,
    put,
    write_json,
)

from bot.csb import Catalog
from bot.domain.errors import InfraError, UserInputError
from bot.domain.spec import LaneRole, Mode, RunParams

SUITE = fixture_json(SUITE_FIXTURE)


def _counts() -> dict[str, int]:
    counts = dict.fromkeys(SUITE["suites"], 0)
    for task in SUITE["tasks"]:
        counts[task["suite"]] += 1
    return counts


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(build_tree(tmp_path))


def test_suite_file_is_read_whole(catalog: Catalog) -> None:
    task_file = catalog.load(None)
    assert task_file.path == CANONICAL
    assert task_file.shape == "suite"
    assert task_file.sha256 == hashlib.sha256((FIXTURES / SUITE_FIXTURE).read_bytes()).hexdigest()
    assert [t.task_id for t in task_file.tasks] == [t["task_id"] for t in SUITE["tasks"]]
    first = task_file.tasks[0]
    assert first.path == f"benchmarks/tasks/{SUITE['tasks'][0]['task_dir']}"
    assert first.suite == SUITE["tasks"][0]["suite"]
    assert first.time_limit_sec == 1200
    # No [agent] or [verifier] in CSB's task.toml: Harbor's 600 s defaults; build_timeout_sec 900.
    assert first.harbor_budget_sec == 2 * 900 + 360 + 600 + 2 * 600


def test_suite_keys_come_from_the_file_and_counts_from_its_tasks(catalog: Catalog) -> None:
    suites = catalog.suites()
    assert list(suites) == list(SUITE["suites"])
    assert suites == _counts()


def test_selection_files_both_layouts(catalog: Catalog) -> None:
    cgen = catalog.load(CGEN_PATH)
    assert (cgen.shape, cgen.suites) == ("selection", {"csb_sdlc_build": 1})
    assert cgen.tasks[0].path == CGEN_LEGACY_FOLDER  # only the legacy benchmarks/<task_dir> exists
    assert cgen.tasks[0].time_limit_sec == 900
    debug = catalog.load(DEBUG_PATH)
    assert (debug.shape, debug.suites) == ("selection", {"csb_sdlc_debug": 1})
    assert debug.tasks[0].path == DEBUG_FOLDER


def test_selection_suite_fields_and_default_folder(tmp_path: Path) -> None:
    write_json(
        tmp_path,
        "configs/sel.json",
        {
            "metadata": {},
            "tasks": [
                {"task_id": "a", "mcp_suite": "csb_org_x"},
                {"task_id": "b", "suite": "s2", "task_dir": "s2/b"},
                {"task_id": "c"},  # no suite: skipped, as CSB's harness does
                {"task_id": "d", "benchmark": "s1", "mcp_suite": "ignored"},
            ],
        },
    )
    task_file = Catalog(tmp_path).load("configs/sel.json")
    assert [(t.task_id, t.suite, t.path, t.time_limit_sec) for t in task_file.tasks] == [
        ("a", "csb_org_x", "benchmarks/tasks/csb_org_x/a", None),
        ("b", "s2", "benchmarks/tasks/s2/b", None),
        ("d", "s1", "benchmarks/tasks/s1/d", None),
    ]
    assert task_file.suites == {"csb_org_x": 1, "s1": 1, "s2": 1}


def test_resolve_whole_default_file(catalog: Catalog) -> None:
    spec = catalog.resolve(RunParams(), default_parallel=8)
    assert (spec.task_file, len(spec.tasks), spec.parallel) == (CANONICAL, len(SUITE["tasks"]), 8)
    assert [lane.role for lane in spec.lanes] == [LaneRole.BASELINE, LaneRole.MCP]
    assert [lane.config for lane in spec.lanes] == ["baseline-local-direct", "mcp-remote-direct"]
    assert catalog.missing_task_folders(spec) == []


def test_resolve_one_suite(catalog: Catalog) -> None:
    suite, count = max(_counts().items(), key=lambda item: item[1])
    spec = catalog.resolve(RunParams(suite=suite, parallel=3), default_parallel=8)
    assert len(spec.tasks) == count and {t.suite for t in spec.tasks} == {suite}
    assert spec.parallel == 3
    assert spec.suite_label == suite


def test_unknown_suite_lists_the_files_keys(catalog: Catalog) -> None:
    with pytest.raises(UserInputError) as caught:
        catalog.resolve(RunParams(suite="csb_nope"), default_parallel=4)
    assert caught.value.message == "unknown suite `csb_nope`; valid suites: " + ", ".join(
        sorted(SUITE["suites"])
    )


def test_selection_file_suites_are_its_tasks_suites(catalog: Catalog) -> None:
    with pytest.raises(UserInputError, match=r"unknown suite `csb_sdlc_fix`; valid suites: csb_sdlc_build$"):
        catalog.resolve(RunParams(selection_file=CGEN_PATH, suite="csb_sdlc_fix"), default_parallel=4)
    spec = catalog.resolve(RunParams(selection_file=CGEN_PATH, suite="csb_sdlc_build"), default_parallel=4)
    assert [t.task_id for t in spec.tasks] == ["cgen-deps-install-001"]


def test_a_declared_suite_without_tasks_in_the_file_is_refused(catalog: Catalog) -> None:
    empty = next(key for key, count in _counts().items() if count == 0)
    with pytest.raises(UserInputError, match=f"no tasks in suite `{empty}` of {CANONICAL}"):
        catalog.resolve(RunParams(suite=empty), default_parallel=4)


def test_both_task_files_are_refused(catalog: Catalog) -> None:
    params = RunParams(suite_file=CANONICAL, selection_file=CGEN_PATH)
    with pytest.raises(UserInputError, match="not both"):
        catalog.resolve(params, default_parallel=4)


def test_lanes_follow_the_full_config_and_mode(catalog: Catalog) -> None:
    artifact = catalog.resolve(RunParams(full_config="artifact_full"), default_parallel=4)
    assert [lane.config for lane in artifact.lanes] == ["baseline-local-artifact", "artifact_full"]
    scip = catalog.resolve(
        RunParams(full_config="mcp-scip-remote-direct", mode=Mode.FULL_ONLY), default_parallel=4
    )
    assert [lane.config for lane in scip.lanes] == ["mcp-scip-remote-direct"]
    for refused in ("github_full", "sourcegraph_scip"):  # eval_matrix names CSB's harness refuses
        with pytest.raises(UserInputError, match="accepted full configs"):
            catalog.resolve(RunParams(full_config=refused), default_parallel=4)


def test_default_is_the_canonical_suite_file_even_beside_others(tmp_path: Path) -> None:
    build_tree(tmp_path, task_folders=False)
    put(tmp_path, "benchmarks/suites/other.json", SUITE_FIXTURE)
    assert Catalog(tmp_path).default_task_file() == CANONICAL


def test_default_is_the_only_suite_file(tmp_path: Path) -> None:
    build_tree(tmp_path, suite_file="benchmarks/suites/csb-v3.json", task_folders=False)
    put(tmp_path, "configs/selected_benchmark_tasks.json", "selection_cgen_rerun.json")
    assert Catalog(tmp_path).default_task_file() == "benchmarks/suites/csb-v3.json"


def test_default_falls_back_to_the_selection_file(tmp_path: Path) -> None:
    build_tree(tmp_path, suite_file=None, task_folders=False)
    put(tmp_path, "configs/selected_benchmark_tasks.json", "selection_cgen_rerun.json")
    catalog = Catalog(tmp_path)
    assert catalog.default_task_file() == "configs/selected_benchmark_tasks.json"
    assert catalog.load(None).shape == "selection"


def test_several_suite_files_and_no_selection_file_ask_to_choose(tmp_path: Path) -> None:
    put(tmp_path, "benchmarks/suites/a.json", SUITE_FIXTURE)
    put(tmp_path, "benchmarks/suites/b.json", SUITE_FIXTURE)
    with pytest.raises(UserInputError, match=r"benchmarks/suites/a\.json, benchmarks/suites/b\.json"):
        Catalog(tmp_path).default_task_file()


def test_no_task_file_at_all_is_an_infra_error(tmp_path: Path) -> None:
    with pytest.raises(InfraError, match="no task file"):
        Catalog(tmp_path).load(None)


@pytest.mark.parametrize("path", ["../outside.json", "configs/../../outside.json", "<absolute>"])
def test_paths_outside_the_checkout_are_refused(tmp_path: Path, path: str) -> None:
    repo = build_tree(tmp_path / "repo", task_folders=False)
    outside = put(tmp_path, "outside.json", SUITE_FIXTURE)
    with pytest.raises(UserInputError, match="outside the CSB checkout"):
        Catalog(repo).load(str(outside) if path == "<absolute>" else path)


def test_absolute_path_inside_the_checkout_is_made_relative(tmp_path: Path) -> None:
    repo = build_tree(tmp_path, task_folders=False)
    assert Catalog(repo).load(str(repo / "configs" / ".." / CGEN_PATH)).path == CGEN_PATH


def test_missing_file_is_named_with_the_suite_files_that_exist(catalog: Catalog) -> None:
    with pytest.raises(UserInputError) as caught:
        catalog.load("benchmarks/suites/typo.json")
    assert caught.value.message == (
        f"task file `benchmarks/suites/typo.json` not found in the CSB checkout; suite files: {CANONICAL}"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{broken", "is not valid JSON"),
        ("[]", "is not a JSON object"),
        ('{"suite_id": "x"}', "has no `tasks` list"),
        ('{"tasks": [{"suite": "s"}]}', "task #1 has no `task_id`"),
        ('{"tasks": [{"task_id": "t", "suite": "s", "task_dir": "../../etc"}]}', "would leave benchmarks/"),
    ],
)
def test_malformed_files_are_user_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "bad.json").write_text(text)
    with pytest.raises(UserInputError, match=message):
        Catalog(tmp_path).load("configs/bad.json")


def test_missing_task_folders_are_reported_under_the_current_layout(tmp_path: Path) -> None:
    catalog = Catalog(build_tree(tmp_path, task_folders=False))
    spec = catalog.resolve(RunParams(selection_file=DEBUG_PATH), default_parallel=2)
    assert catalog.missing_task_folders(spec) == [DEBUG_FOLDER]


def test_spec_hash_is_stable_and_follows_the_file_content(catalog: Catalog) -> None:
    params = RunParams(suite=SUITE["tasks"][0]["suite"])
    first = catalog.resolve(params, default_parallel=4)
    assert catalog.resolve(params, default_parallel=4).spec_hash() == first.spec_hash()

    suite_path = catalog.repo / CANONICAL
    touched = suite_path.stat().st_mtime_ns + 5_000_000_000
    os.utime(suite_path, ns=(touched, touched))  # same bytes, new mtime: reparsed, same hash
    assert catalog.resolve(params, default_parallel=4).spec_hash() == first.spec_hash()

    suite_path.write_bytes(suite_path.read_bytes().replace(b'"frozen": false', b'"frozen": true '))
    os.utime(suite_path, ns=(touched + 1_000_000_000, touched + 1_000_000_000))
    changed = catalog.resolve(params, default_parallel=4)
    assert changed.tasks == first.tasks
    assert changed.task_file_sha256 != first.task_file_sha256
    assert changed.spec_hash() != first.spec_hash()


def test_unchanged_files_are_served_from_the_cache(catalog: Catalog) -> None:
    assert catalog.load(CGEN_PATH) is catalog.load(CGEN_PATH)
    assert catalog.load(None) is catalog.load(CANONICAL)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"task_id": "../../../victim", "suite": "s"},
            r"task #2 has an unusable task_id '\.\./\.\./\.\./victim'",
        ),
        (
            {"task_id": "a/b", "suite": "s"},
            "task #2 has an unusable task_id 'a/b': it contains a path separator",
        ),
        ({"task_id": "..", "suite": "s"}, "task #2 has an unusable task_id '..': it contains `..`"),
        ({"task_id": "/etc", "suite": "s"}, "task #2 has an unusable task_id '/etc'"),
        ({"task_id": "a\x00b", "suite": "s"}, "NUL character"),
        ({"task_id": "x" * 129, "suite": "s"}, "longer than 128 characters"),
        (
            {"task_id": "t", "suite": "s", "task_dir": "/etc/t"},
            r"task #2 \(`t`\) has an unusable task_dir '/etc/t'",
        ),
        ({"task_id": "t", "suite": "s", "task_dir": "s/../../t"}, "would leave benchmarks/"),
        ({"task_id": "t", "suite": "s", "task_dir": "s/t\x00"}, "NUL character"),
        ({"task_id": "t", "suite": "s", "task_dir": "s/" + "t" * 600}, "longer than 512 characters"),
        ({"task_id": "t", "suite": "../x"}, r"task #2 \(`t`\) has an unusable suite '\.\./x'"),
        ({"task_id": "t", "suite": "a/b"}, "unusable suite 'a/b': it contains a path separator"),
    ],
)
def test_a_hostile_entry_blocks_the_whole_file_and_is_named(
    tmp_path: Path, entry: dict[str, str], message: str
) -> None:
    tasks = [{"task_id": "fine-task-001", "suite": "s"}, entry]
    write_json(tmp_path, "benchmarks/suites/hostile.json", {"suites": {"s": 2}, "tasks": tasks})
    with pytest.raises(UserInputError, match=message) as caught:
        Catalog(tmp_path).resolve(RunParams(suite_file="benchmarks/suites/hostile.json"), 2)
    assert "benchmarks/suites/hostile.json" in caught.value.message
    assert len(caught.value.message) < 300


@pytest.mark.parametrize(
    ("rel", "text", "error", "message"),
    [
        (CANONICAL, '{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}", UserInputError, "nested too deeply"),
        (CANONICAL, '{"tasks": [], "x": NaN}', UserInputError, "non-finite number NaN"),
        ("configs/eval_matrix.json", "[" * 100_000 + "]" * 100_000, InfraError, "nested too deeply"),
    ],
)
def test_a_hostile_task_file_or_eval_matrix_is_an_error_not_a_crash(
    tmp_path: Path, rel: str, text: str, error: type[Exception], message: str
) -> None:
    repo = build_tree(tmp_path)
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    with pytest.raises(error, match=message):
        Catalog(repo).resolve(RunParams(), 4)


def test_a_task_file_past_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    repo = build_tree(tmp_path)
    with (repo / CANONICAL).open("ab") as handle:
        handle.truncate(33 * 1024 * 1024)  # sparse: cheap to make
    with pytest.raises(UserInputError, match="is larger than 32 MiB"):
        Catalog(repo).load(CANONICAL)
