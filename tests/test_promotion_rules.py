"""CSB's promotion rules (promote_run.py's gates, generate_manifest.py's MANIFEST, the quarantine rule,
triage.json, the destination), each on fixtures F1–F12 of CSB's post-run rules (sources in
tests/fixtures/README.md), with the verdict CSB's own tool gives written in the test."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.csb.promotion import steps
from bot.csb.promotion.destination import destination
from bot.csb.promotion.gates import check_folder, check_gates
from bot.csb.promotion.manifest_check import differences
from bot.csb.promotion.manifest_diff import official_folders, promotion_diff
from bot.csb.promotion.manifest_file import (
    ManifestUnreadable,
    latest_run_dir,
    manifest_json,
    parse_manifest,
    read_manifest,
    write_manifest,
)
from bot.csb.promotion.manifest_scan import build_manifest, has_agent_output, normalise_task_name, scan
from bot.csb.promotion.quarantine import candidates, trials_to_move
from bot.csb.promotion.steps import Plan, Settled
from bot.csb.promotion.triage import reviewed, triage_problem, triage_record, write_triage
from bot.domain.promotion import EntryChange, FlagSource, GateName

FIXTURES = Path(__file__).parent / "fixtures" / "csb"
TRIALS = FIXTURES / "trials"
BASELINE, MCP = "baseline-local-direct", "mcp-remote-direct"
RUN = "csb_org_org_sonnet_20260308_034803"
BATCH = "2026-03-08__03-48-03"
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


def _trial(run: Path, config: str, name: str, source: str, **result_changes: Any) -> Path:
    """A copy of fixture trial `source` at `<run>/<config>/<batch>/<name>`, result.json fields changed."""
    folder = run / config / BATCH / name
    shutil.copytree(TRIALS / source, folder)
    if result_changes:
        data = _json(folder / "result.json")
        data.update(result_changes)
        (folder / "result.json").write_text(json.dumps(data))
    return folder


def _metrics(trial: Path, **changes: Any) -> None:
    data = _json(trial / "task_metrics.json")
    data.update(changes)
    (trial / "task_metrics.json").write_text(json.dumps(data))


def _gates(run: Path, *, extract_script: bool = True, max_warnings: int = 10) -> dict[GateName, Any]:
    report = check_gates(check_folder(run, extract_script=extract_script, now=0.0), max_warnings)
    return {gate.name: gate for gate in report.gates}


# -- Gates (promote_run.py's check_gates) --------------------------------------------------------------


def test_f3_eleven_times_blocks_on_warnings_and_ten_times_does_not(tmp_path: Path) -> None:
    run = tmp_path / RUN
    for n in range(10):
        _trial(run, MCP, f"mcp_ccx-agentic-{n:03d}_ef3x9y__B8Mpx{n:02d}", "F2_mcp_pass")
    gates = _gates(run)
    assert gates[GateName.WARNINGS].count == 10  # deepsearch_unused each (F3: WARNING + INFO)
    assert not gates[GateName.WARNINGS].failed  # 10 > 10 is false
    assert not any(gate.failed for gate in gates.values())

    _trial(run, MCP, "mcp_ccx-agentic-010_ef3x9y__B8Mpx10", "F2_mcp_pass")
    gates = _gates(run)
    warnings = gates[GateName.WARNINGS]
    assert (warnings.failed, warnings.count, warnings.limit) == (True, 11, 10)
    assert {flag.rule for flag in warnings.first} == {"deepsearch_unused"}
    assert len(warnings.first) == 5  # the first flagged tasks, not all eleven
    assert [name for name, gate in gates.items() if gate.failed] == [GateName.WARNINGS]
    assert not _gates(run, max_warnings=11)[GateName.WARNINGS].failed  # `max_warnings` in the config


def test_f3b_blocks_on_a_critical(tmp_path: Path) -> None:
    run = tmp_path / RUN
    trial = _trial(run, MCP, "mcp_ccx-agentic-082_ef3x9y__B8MpxNF", "F2_mcp_pass")
    _metrics(trial, tool_calls_mcp=0)
    gates = _gates(run)
    critical = gates[GateName.CRITICALS]
    assert (critical.failed, critical.count) == (True, 1)
    assert [(f.rule, f.severity, f.task_id) for f in critical.first] == [
        ("mcp_never_used", "CRITICAL", "mcp_ccx-agentic-082_ef3x9y")
    ]
    assert not gates[GateName.WARNINGS].failed  # one warning (deepsearch_unused) of ten allowed


def test_f11_an_existing_flagged_tasks_json_is_reused_as_is_with_its_age(tmp_path: Path) -> None:
    run = tmp_path / RUN
    _trial(run, MCP, "mcp_ccx-agentic-082_ef3x9y__B8MpxNF", "F2_mcp_pass")
    f11 = {
        "config": MCP, "tasks_checked": 2, "total_flags": 3, "critical_count": 1, "warning_count": 1,
        "info_count": 1,
        "flags": [{"rule": "mcp_never_used", "severity": "CRITICAL",
                   "message": "MCP tools were never called in MCP-enabled mode",
                   "task_id": "t1", "task_dir": "..."}],
    }  # fmt: skip
    path = run / MCP / "flagged_tasks.json"
    path.write_text(json.dumps(f11))
    os.utime(path, (1000.0, 1000.0))
    check = check_folder(run, extract_script=True, now=4600.0)
    (config,) = check.configs
    assert (config.source, config.age_seconds, config.critical_count) == (FlagSource.REUSED, 3600.0, 1)
    gates = {gate.name: gate for gate in check_gates(check, 10).gates}
    assert gates[GateName.CRITICALS].failed and gates[GateName.CRITICALS].first[0].task_id == "t1"

    path.write_text(json.dumps({**f11, "config": BASELINE}))  # another config's file
    gates = _gates(run)
    assert gates[GateName.VALIDATION_ERROR].failed
    assert "written for config `baseline-local-direct`" in gates[GateName.VALIDATION_ERROR].detail


def test_tasks_without_result_json_block_with_their_count(tmp_path: Path) -> None:
    run = tmp_path / RUN
    _trial(run, BASELINE, "ccx-agentic-082__6LFhkXH", "F1_baseline_pass")
    (run / BASELINE / BATCH / "ccx-agentic-083__7AbCdEf").mkdir()
    missing = _gates(run)[GateName.MISSING_RESULTS]
    assert (missing.failed, missing.count, missing.detail) == (True, 1, "1/2")


def test_no_configs_is_a_validation_error_and_no_tasks_its_own_gate(tmp_path: Path) -> None:
    run = tmp_path / RUN
    run.mkdir()
    gates = _gates(run)
    assert (
        gates[GateName.VALIDATION_ERROR].failed
        and "No config directories" in gates[GateName.VALIDATION_ERROR].detail
    )
    (run / BASELINE).mkdir()
    gates = _gates(run)
    assert gates[GateName.NO_TASKS].failed and not gates[GateName.VALIDATION_ERROR].failed
    assert _gates(tmp_path / "gone")[GateName.VALIDATION_ERROR].failed


def test_missing_task_metrics_block_only_when_the_checkout_cannot_extract_them(tmp_path: Path) -> None:
    run = tmp_path / RUN
    trial = _trial(run, BASELINE, "ccx-agentic-082__6LFhkXH", "F1_baseline_pass")
    (trial / "task_metrics.json").unlink()
    assert not _gates(run, extract_script=True)[GateName.METRICS_EXTRACTION].failed
    gate = _gates(run, extract_script=False)[GateName.METRICS_EXTRACTION]
    assert gate.failed and gate.count == 1 and "extract_task_metrics.py" in gate.detail


# -- MANIFEST rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("ccx-agentic-082", "CCX-agentic-082"),
        ("mcp_ccx-agentic-082_ef3x9y", "CCX-agentic-082"),
        ("bl_django-orm-query-arch-001_a1B2c3", "django-orm-query-arch-001"),
        ("sgonly_numpy-dtype-localize-001", "numpy-dtype-localize-001"),
        ("instance_ansible-ansible-abc123", "instance_ansible__ansible-abc123"),
        ("numpy-dtype-localize-001", "numpy-dtype-localize-001"),
    ],
)
def test_task_names_are_normalised_as_generate_manifest_does(name: str, key: str) -> None:
    assert normalise_task_name(name) == key


def test_agent_output_null_tokens_count_as_output_and_zero_tokens_do_not() -> None:
    assert has_agent_output({"agent_result": {"n_input_tokens": None, "n_output_tokens": None}})
    assert not has_agent_output({"agent_result": {"n_input_tokens": 0, "n_output_tokens": 0}})
    assert has_agent_output({"agent_result": {"n_input_tokens": 0, "n_output_tokens": 5}})


def _official(tmp_path: Path) -> Path:
    """An official tree with F1 and F2 in an older run of the same suite."""
    official = tmp_path / "runs" / "official"
    older = official / "csb_org_org_sonnet_20260301_000000"
    _trial(older, BASELINE, "ccx-agentic-082__6LFhkXH", "F1_baseline_pass")
    _trial(older, MCP, "mcp_ccx-agentic-082_ef3x9y__B8MpxNF", "F2_mcp_pass")
    return official


def test_f5_never_replaces_f1_though_it_is_newer(tmp_path: Path) -> None:
    official = _official(tmp_path)
    staged = tmp_path / "runs" / "staging" / RUN
    _trial(staged, BASELINE, "ccx-agentic-082__ZeRoTok", "F5_zero_token", task_name="ccx-agentic-082")
    diff = promotion_diff(official_folders(official), [(RUN, staged)])
    (kept,) = diff.tasks
    assert (kept.key, kept.task, kept.change) == (
        f"csb_org_org/{BASELINE}",
        "CCX-agentic-082",
        EntryChange.KEPT,
    )
    assert kept.before is not None and (kept.before.status, kept.before.reward) == ("passed", 0.4417)
    assert kept.after is not None and (kept.after.status, kept.after.reward) == ("errored", 0.0)
    (key,) = diff.keys
    assert key.before == key.after  # the official figures do not move


def test_a_newer_result_replaces_and_a_new_task_is_added_with_figures_before_and_after(
    tmp_path: Path,
) -> None:
    official = _official(tmp_path)
    staged = tmp_path / "runs" / "staging" / RUN
    _trial(staged, BASELINE, "ccx-agentic-082__NeWeR01", "F1_baseline_pass",
           verifier_result={"rewards": {"reward": 1.0}}, started_at="2026-03-09T00:00:00Z")  # fmt: skip
    _trial(staged, BASELINE, "ccx-agentic-083__ZeRoTok", "F5_zero_token")
    diff = promotion_diff(official_folders(official), [(RUN, staged)])
    replaced, added = diff.of(EntryChange.REPLACED), diff.of(EntryChange.ADDED)
    assert [
        (c.task, c.before and c.before.reward, c.after and c.after.reward, c.better) for c in replaced
    ] == [("CCX-agentic-082", 0.4417, 1.0, True)]
    assert [(c.task, c.after and c.after.status) for c in added] == [("CCX-agentic-083", "errored")]
    (key,) = diff.keys
    assert key.before is not None
    assert (key.before.task_count, key.before.passed, key.before.mean_reward) == (1, 1, 0.442)
    assert (key.after.task_count, key.after.passed, key.after.errored, key.after.mean_reward) == (
        2,
        1,
        1,
        1.0,
    )
    assert key.after.pass_rate == 0.5


def test_an_older_result_does_not_replace_a_newer_one(tmp_path: Path) -> None:
    official = _official(tmp_path)
    staged = tmp_path / "runs" / "staging" / RUN
    _trial(
        staged, BASELINE, "ccx-agentic-082__OlDeR01", "F1_baseline_pass", started_at="2026-01-01T00:00:00Z"
    )
    diff = promotion_diff(official_folders(official), [(RUN, staged)])
    assert diff.tasks == ()  # not output-against-none: it simply lost on started_at, nothing shown as kept


def test_f10_is_read_and_written_in_the_same_shape(tmp_path: Path) -> None:
    source = _json(FIXTURES / "MANIFEST_F10.json")
    manifest = parse_manifest(source)
    assert manifest.runs["ccb_build/baseline-local-direct"].tasks["servo-scrollend-event-feat-001"].timed_out
    history = manifest.run_history["ccb_understand/mcp-remote-direct"]["numpy-dtype-localize-001"]
    assert (history.n_runs, history.std_reward) == (2, 0.0472)
    path = tmp_path / "MANIFEST.json"
    write_manifest(path, manifest)
    assert _json(path) == source
    assert (
        "timed_out"
        not in _json(path)["runs"]["ccb_build/baseline-local-direct"]["tasks"]["bustub-hyperloglog-impl-001"]
    )


def test_the_last_promoted_run_of_a_key_is_the_newest_in_run_history() -> None:
    manifest = parse_manifest(_json(FIXTURES / "MANIFEST_F10.json"))
    assert latest_run_dir(manifest, "ccb_understand/mcp-remote-direct") == "understand_haiku_20260225_211346"
    assert latest_run_dir(manifest, "ccb_build/baseline-local-direct") is None  # no history in the excerpt


def test_the_bots_writer_makes_generate_manifests_entries(tmp_path: Path) -> None:
    official = _official(tmp_path)
    newer = official / RUN
    _trial(newer, BASELINE, "ccx-agentic-083__ZeRoTok", "F5_zero_token")
    manifest = build_manifest(scan(official_folders(official)), NOW)
    written = manifest_json(manifest)
    assert set(written) == {"description", "generated", "total_tasks", "total_runs", "runs", "run_history"}
    assert (written["total_runs"], written["total_tasks"]) == (2, 3)
    baseline = written["runs"][f"csb_org_org/{BASELINE}"]
    assert {k: baseline[k] for k in ("run_id", "model", "timestamp", "task_count", "passed", "errored")} == {
        "run_id": f"csb_org_org_{BASELINE}",
        "model": "anthropic/claude-sonnet-4-6",
        "timestamp": "2026-03-08 03-58-30",
        "task_count": 2,
        "passed": 1,
        "errored": 1,
    }
    assert baseline["mean_reward"] == 0.442  # the errored F5 is out of the mean
    assert baseline["tasks"]["CCX-agentic-082"] == {
        "status": "passed", "reward": 0.4417, "has_trajectory": False, "has_cost": True, "judge_score": None,
        "judge_model": None, "judge_dimensions": None, "judge_confidence": None,
    }  # fmt: skip
    assert (
        written["runs"][f"csb_org_org/{MCP}"]["tasks"]["CCX-agentic-082"]["reward"] == 0.3984
    )  # pairs with F1
    history = written["run_history"][f"csb_org_org/{BASELINE}"]
    assert set(history) == {"CCX-agentic-082"}  # F5 (0/0 tokens) is not a valid run
    path = tmp_path / "MANIFEST.json"
    write_manifest(path, manifest)
    assert manifest_json(read_manifest(path) or parse_manifest({})) == written


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "not in generate_manifest.py's shape"),
        ('{"generated": "x", "total_tasks": 1, "total_runs": 1, "runs": {"a/b": {"tasks": 3}}}', "runs.a/b"),
    ],
)
def test_a_manifest_that_is_not_one_is_refused_in_words(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "MANIFEST.json"
    path.write_text(content)
    with pytest.raises(ManifestUnreadable, match=r"MANIFEST\.json") as caught:
        read_manifest(path)
    assert words in str(caught.value)
    path.write_text("{}" + " " * 2048)
    with pytest.raises(ManifestUnreadable, match="larger than"):
        read_manifest(path, limit=1024)
    assert read_manifest(tmp_path / "none.json") is None


# -- Destination, quarantine, triage.json -------------------------------------------------------------


def test_destination_follows_the_raw_folder_and_the_collision_rule(tmp_path: Path) -> None:
    official = tmp_path / "runs" / "official"
    official.mkdir(parents=True)
    assert destination(tmp_path, RUN, force=False, now=NOW).path == f"runs/official/{RUN}"
    (official / "_raw" / RUN).mkdir(parents=True)
    taken = destination(tmp_path, RUN, force=False, now=NOW)
    assert (taken.path, taken.collision) == (f"runs/official/_raw/{RUN}", True)
    forced = destination(tmp_path, RUN, force=True, now=NOW)
    assert forced.path == f"runs/official/_raw/{RUN}__promoted_20260310_120000" and not forced.collision


def test_quarantine_sets_aside_failed_mcp_trials_without_mcp_calls_labelled_as_extended(
    tmp_path: Path,
) -> None:
    run = tmp_path / RUN
    _trial(run, BASELINE, "ccx-agentic-082__6LFhkXH", "F1_baseline_pass")
    _trial(
        run,
        MCP,
        "mcp_ccx-agentic-082_ef3x9y__B8MpxNF",
        "F2_mcp_pass",
        verifier_result={"rewards": {"reward": 0}},
    )
    _trial(
        run, MCP, "mcp_ccx-agentic-083_ab1c2d__B8MpxNG", "F2_mcp_pass", task_name="mcp_ccx-agentic-083_ab1c2d"
    )
    (found,) = candidates(run)
    assert (found.config, found.task, found.mcp_calls, found.extended) == (MCP, "CCX-agentic-082", None, True)
    moving = sorted(str(path) for path in trials_to_move(run, (found,)))
    assert moving == [
        f"{BASELINE}/{BATCH}/ccx-agentic-082__6LFhkXH",
        f"{MCP}/{BATCH}/mcp_ccx-agentic-082_ef3x9y__B8MpxNF",
    ]  # every config of the task moves together


def test_f12_triage_as_read_triage_judges_it(tmp_path: Path) -> None:
    assert reviewed(tmp_path) is None
    write_triage(tmp_path, triage_record(forced=False, reviewed_at=NOW, reviewers=["U1", "U2"]))
    assert triage_problem(tmp_path) is None
    assert reviewed(tmp_path) == ("U1, U2", "2026-03-10T12:00:00+00:00")
    assert _json(tmp_path / "triage.json")["reviewer"] == "U1, U2"
    f12 = {"decision": "include", "reason_code": "valid_full_run", "reviewed_at": "2026-03-10T12:00:00Z"}
    (tmp_path / "triage.json").write_text(json.dumps(f12))
    assert triage_problem(tmp_path) == "missing_reviewer"
    (tmp_path / "triage.json").write_text(json.dumps({**f12, "reviewer": "ops", "decision": "maybe"}))
    assert triage_problem(tmp_path) == "invalid_decision"
    (tmp_path / "triage.json").unlink()
    assert triage_problem(tmp_path) == "missing"


def test_a_written_manifest_is_compared_with_the_diff_shown(tmp_path: Path) -> None:
    official = _official(tmp_path)
    staged = tmp_path / "runs" / "staging" / RUN
    _trial(staged, BASELINE, "ccx-agentic-082__NeWeR01", "F1_baseline_pass",
           verifier_result={"rewards": {"reward": 1.0}}, started_at="2026-03-09T00:00:00Z")  # fmt: skip
    _trial(
        staged,
        MCP,
        "mcp_ccx-agentic-082_ef3x9y__ZeRoTok",
        "F5_zero_token",
        task_name="mcp_ccx-agentic-082_ab1c2d",
    )
    diff = promotion_diff(official_folders(official), [(RUN, staged)])
    assert [c.change for c in diff.tasks] == [EntryChange.REPLACED, EntryChange.KEPT]
    shutil.move(staged, official / RUN)  # the promotion's move, then the bot's writer
    manifest = build_manifest(scan(official_folders(official)), NOW)
    assert differences(manifest, diff) == []

    entry = manifest.runs[f"csb_org_org/{BASELINE}"]
    entry.tasks["CCX-agentic-082"].reward = 0.5  # a MANIFEST that says otherwise
    del manifest.runs[f"csb_org_org/{MCP}"].tasks["CCX-agentic-082"]
    found = {(d.key, d.task, d.expected, d.found) for d in differences(manifest, diff)}
    assert found == {
        (f"csb_org_org/{BASELINE}", "CCX-agentic-082", "passed 1.0000", "passed 0.5000"),
        (f"csb_org_org/{MCP}", "CCX-agentic-082", "passed 0.3984", "absent"),
    }


# -- The file steps and an interrupted promotion settled ----------------------------------------------


def _plan(tmp_path: Path) -> tuple[Plan, Path]:
    official = _official(tmp_path)
    staged = tmp_path / "runs" / "staging" / RUN
    _trial(
        staged, BASELINE, "ccx-agentic-082__NeWeR01", "F1_baseline_pass", started_at="2026-03-09T00:00:00Z"
    )
    _trial(staged, BASELINE, "ccx-agentic-083__NeWeR02", "F1_baseline_pass", task_name="ccx-agentic-083")
    _trial(staged, MCP, "mcp_ccx-agentic-083_ab1c2d__NeWeR03", "F2_mcp_pass",
           task_name="mcp_ccx-agentic-083_ab1c2d", verifier_result={"rewards": {"reward": 0}})  # fmt: skip
    chosen = candidates(staged)
    assert [c.task for c in chosen] == ["CCX-agentic-083"]
    plan = Plan(
        source=staged,
        target=official / RUN,
        official_runs=official,
        manifest=official / "MANIFEST.json",
        quarantine=tuple(trials_to_move(staged, chosen)),
        triage=triage_record(forced=False, reviewed_at=NOW, reviewers=["U1"]),
        stamp="20260310T120000Z",
    )
    return plan, staged


def _tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


STEPS = ("quarantine", "triage", "move", "regenerate")


def _run(plan: Plan, count: int) -> None:
    for name in STEPS[:count]:
        if name == "quarantine":
            steps.quarantine(plan)
        elif name == "triage":
            steps.triage(plan)
        elif name == "move":
            steps.move(plan)
        else:
            steps.regenerate(plan, NOW)


def test_the_steps_promote_and_each_can_run_again(tmp_path: Path) -> None:
    plan, staged = _plan(tmp_path)
    _run(plan, 4)
    _run(plan, 4)  # every step again: nothing is done twice, nothing fails
    assert not staged.exists() and triage_problem(plan.target) is None
    manifest = read_manifest(plan.manifest)
    assert manifest is not None
    assert manifest.runs[f"csb_org_org/{BASELINE}"].tasks["CCX-agentic-082"].reward == 0.4417
    assert "CCX-agentic-083" not in manifest.runs[f"csb_org_org/{BASELINE}"].tasks  # quarantined, both lanes
    archived = plan.official_runs / "archive" / "qa_needed" / "failed_zero_mcp_calls" / RUN
    assert _tree(archived) == sorted(
        [BASELINE, f"{BASELINE}/{BATCH}", MCP, f"{MCP}/{BATCH}"]
        + [p for t in ("ccx-agentic-083__NeWeR02",) for p in _tree_of(archived, BASELINE, t)]
        + [p for t in ("mcp_ccx-agentic-083_ab1c2d__NeWeR03",) for p in _tree_of(archived, MCP, t)]
    )
    assert (
        plan.official_runs / "archive" / "qa_needed" / "quarantine_report_20260310T120000Z.json"
    ).is_file()


def _tree_of(root: Path, config: str, trial: str) -> list[str]:
    folder = root / config / BATCH / trial
    return [str(folder.relative_to(root)), *(str(p.relative_to(root)) for p in folder.rglob("*"))]


@pytest.mark.parametrize("done", range(5))
def test_an_interrupted_promotion_is_undone_before_the_move_and_finished_after(
    tmp_path: Path, done: int
) -> None:
    """A crash after `done` steps (each step's own writes are a rename, or a file settle recognises)."""
    plan, staged = _plan(tmp_path)
    staging_before = _tree(staged)
    _run(plan, done)
    settled = steps.settle(plan, NOW)
    if done < STEPS.index("move") + 1:
        assert settled is Settled.UNDONE
        assert _tree(staged) == staging_before and not plan.target.exists()
        assert not (plan.official_runs / "archive").exists() or not any(
            p.is_file() for p in (plan.official_runs / "archive").rglob("*")
        )
    else:
        assert settled is Settled.FINISHED and not staged.exists()
        manifest = read_manifest(plan.manifest)
        assert manifest is not None
        folders = build_manifest(scan(official_folders(plan.official_runs)), NOW)
        assert manifest_json(manifest) == manifest_json(folders)  # the MANIFEST matches the folders
        assert manifest.runs[f"csb_org_org/{BASELINE}"].tasks["CCX-agentic-082"].reward == 0.4417
        assert RUN in {
            run.run_dir for run in manifest.run_history[f"csb_org_org/{BASELINE}"]["CCX-agentic-082"].runs
        }
        assert "CCX-agentic-083" not in manifest.runs[f"csb_org_org/{BASELINE}"].tasks
    again = steps.settle(plan, NOW)
    assert again is settled  # settling twice changes nothing


def test_a_run_in_neither_place_is_left_for_an_operator(tmp_path: Path) -> None:
    plan, staged = _plan(tmp_path)
    shutil.rmtree(staged)
    assert steps.settle(plan, NOW) is Settled.LOST
    assert not plan.manifest.exists()
