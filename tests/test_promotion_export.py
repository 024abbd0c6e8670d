"""The promotion's export step: the checkout's `export_official_results.py` (here the example bench's
stand-in, a real child process) run over `runs/official` as `promote_run.py` runs it, its bundle read back;
skipped, and saying so, when the checkout has no such script; loud when the script fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from harness import copy_bench

from bot.csb.child_env import child_environ
from bot.csb.promotion import execute

ENV = child_environ(os.environ)


def _trial(run: Path, config: str, task: str, reward: float, started: str) -> None:
    folder = run / config / "2026-01-05__10-00-00" / f"{task}__abc1234"
    folder.mkdir(parents=True)
    result = {"task_name": task, "started_at": started, "verifier_result": {"rewards": {"reward": reward}}}
    (folder / "result.json").write_text(json.dumps(result))


def _official(repo: Path) -> None:
    """Two official runs of one suite: the later one's pagination trial is what the export keeps."""
    official = repo / "runs" / "official"
    early, late = official / "csb_sdlc_fix_model_20260105", official / "csb_sdlc_fix_model_20260201"
    _trial(early, "baseline-local-direct", "pagination-offset-fix-001", 0.0, "2026-01-05T10:00:00")
    _trial(early, "baseline-local-direct", "slugify-punctuation-fix-001", 1.0, "2026-01-05T10:01:00")
    _trial(late, "baseline-local-direct", "pagination-offset-fix-001", 1.0, "2026-02-01T10:00:00")
    _trial(late, "mcp-remote-direct", "pagination-offset-fix-001", 1.0, "2026-02-01T10:00:00")


def test_the_export_writes_csbs_bundle_and_the_step_reads_it_back(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path)
    _official(repo)
    note = execute.export(repo, ENV)
    assert note == "docs/official_results written: 2 runs, 3 tasks"
    bundle = repo / "docs" / "official_results"
    data = json.loads((bundle / "data" / "official_results.json").read_text())
    assert data["all_task_count"] == 4 and data["excluded_task_count"] == 0
    rows = {(r["suite"], r["config"]): (r["task_count"], r["pass_rate"]) for r in data["suite_summaries"]}
    # The latest pagination trial (passed) replaces the earlier (failed) one: both baseline tasks pass.
    assert rows == {
        ("csb_sdlc_fix", "baseline-local-direct"): (2, 1.0),
        ("csb_sdlc_fix", "mcp-remote-direct"): (1, 1.0),
    }
    assert (bundle / "README.md").is_file() and (bundle / "index.html").is_file()
    assert (bundle / "suites" / "csb_sdlc_fix.md").is_file()


def test_a_checkout_without_the_script_is_skipped_and_says_so(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path)
    (repo / execute.EXPORT_SCRIPT).unlink()
    skipped = execute.export(repo, ENV)
    assert skipped == execute.Skipped("the checkout has no scripts/analysis/export_official_results.py")
    assert not (repo / "docs").exists()


def test_a_failing_export_is_loud(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path)
    with pytest.raises(execute.StepFailed, match=r"export_official_results\.py exited 2: \[FAIL\] runs dir"):
        execute.export(repo, ENV)  # no runs/official yet: CSB's script exits 2
    _official(repo)
    (repo / "docs").mkdir()
    (repo / "docs" / "official_results").write_text("not a folder")  # the bundle cannot be written
    with pytest.raises(execute.StepFailed, match=r"exited 1: (FileExistsError|NotADirectoryError)"):
        execute.export(repo, ENV)


def test_an_export_that_exits_0_and_writes_nothing_is_a_failure(tmp_path: Path) -> None:
    repo = copy_bench(tmp_path)
    (repo / execute.EXPORT_SCRIPT).write_text("print('[OK] Wrote export bundle to: nowhere')\n")
    _official(repo)
    with pytest.raises(execute.StepFailed, match="exited 0 but wrote no docs/official_results/data"):
        execute.export(repo, ENV)
