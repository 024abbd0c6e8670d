"""The digest a promotion's card is bound by: the run's own files and only the MANIFEST entries its diff
touches, so a change elsewhere in the MANIFEST keeps it and a change to a touched entry (or the run's
files) changes it, with words saying which."""

from __future__ import annotations

from pathlib import Path

from bot.csb.promotion.digest import drift, promotion_digest, touched_entries
from bot.csb.promotion.manifest_file import Manifest, RunEntry, TaskEntry, TaskHistory, write_manifest
from bot.domain.promotion import EntryChange, ManifestDiff, TaskChange, TaskResult

FIX = "csb_sdlc_fix/baseline-local-direct"
DEBUG = "csb_sdlc_debug/baseline-local-direct"


def _run(key: str, tasks: dict[str, float]) -> RunEntry:
    return RunEntry(
        run_id=key.split("/")[0] + "_haiku_0",
        model="haiku",
        timestamp="2026-03-10T12:00:00",
        task_count=len(tasks),
        passed=sum(reward > 0 for reward in tasks.values()),
        failed=sum(reward == 0 for reward in tasks.values()),
        errored=0,
        mean_reward=sum(tasks.values()) / max(len(tasks), 1),
        tasks={task: TaskEntry(status="passed" if r else "failed", reward=r) for task, r in tasks.items()},
    )


def _manifest(path: Path, fix: dict[str, float], debug: dict[str, float], generated: str) -> None:
    history = {
        FIX: {task: TaskHistory(n_runs=1, mean_reward=r, std_reward=0.0, runs=[]) for task, r in fix.items()}
    }
    write_manifest(
        path,
        Manifest(
            generated=generated,
            total_tasks=len(fix) + len(debug),
            total_runs=2,
            runs={FIX: _run(FIX, fix), DEBUG: _run(DEBUG, debug)},
            run_history=history,
        ),
    )


def _diff(*tasks: tuple[str, str, EntryChange]) -> ManifestDiff:
    after = TaskResult(status="passed", reward=1.0, run_dir="csb_sdlc_fix_haiku_2")
    return ManifestDiff(tasks=tuple(TaskChange(key=k, task=t, change=c, after=after) for k, t, c in tasks))


def test_only_the_touched_entries_and_the_run_folder_count(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "staging" / "csb_sdlc_fix_haiku_2"
    (folder / "baseline-local-direct").mkdir(parents=True)
    (folder / "baseline-local-direct" / "result.json").write_text("{}")
    manifest = tmp_path / "runs" / "official" / "MANIFEST.json"
    manifest.parent.mkdir(parents=True)
    _manifest(manifest, {"fix-a": 1.0, "fix-b": 0.0}, {"debug-a": 1.0}, "2026-03-10T12:00:00")
    diff = _diff((FIX, "fix-a", EntryChange.REPLACED), (FIX, "fix-c", EntryChange.ADDED))
    assert touched_entries(diff) == [(FIX, "fix-a"), (FIX, "fix-c")]
    shown = str(promotion_digest([folder], manifest, touched_entries(diff)))

    def now() -> str:
        return str(promotion_digest([folder], manifest, touched_entries(diff)))

    assert now() == shown
    # Another suite's entries, an untouched task of the same key and the MANIFEST's stamp all change:
    _manifest(manifest, {"fix-a": 1.0, "fix-b": 1.0}, {"debug-a": 0.0, "debug-b": 1.0}, "2026-03-11T08:00:00")
    assert now() == shown
    # A touched entry changes (another promotion replaced it):
    _manifest(manifest, {"fix-a": 0.5, "fix-b": 1.0}, {"debug-a": 0.0, "debug-b": 1.0}, "2026-03-11T08:00:00")
    assert now() != shown
    assert drift(shown, promotion_digest([folder], manifest, touched_entries(diff))) == (
        "the MANIFEST entries this promotion would change changed"
    )
    # A touched entry that was absent appears:
    _manifest(manifest, {"fix-a": 1.0, "fix-b": 1.0, "fix-c": 0.0}, {}, "2026-03-11T08:00:00")
    assert now() != shown
    _manifest(manifest, {"fix-a": 1.0, "fix-b": 1.0}, {}, "2026-03-11T08:00:00")
    assert now() == shown  # only the touched entries and the run's files, nothing else


def test_the_run_files_and_an_unreadable_manifest_are_told_apart(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "staging" / "csb_sdlc_fix_haiku_2"
    folder.mkdir(parents=True)
    (folder / "result.json").write_text("{}")
    manifest = tmp_path / "runs" / "official" / "MANIFEST.json"  # none yet
    touched = [(FIX, "fix-a")]
    shown = str(promotion_digest([folder], manifest, touched))
    assert drift(shown, promotion_digest([folder], manifest, touched)) is None
    (folder / "note.txt").write_text("added after the card")
    assert drift(shown, promotion_digest([folder], manifest, touched)) == "the run's files changed"
    (folder / "note.txt").unlink()
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{not json")
    why = drift(shown, promotion_digest([folder], manifest, touched))
    assert why is not None and "MANIFEST.json is not valid JSON" in why
    # A digest of an earlier form (one piece): voided, without naming a half.
    assert drift("0123456789abcdef", promotion_digest([folder], manifest, touched)) is not None
