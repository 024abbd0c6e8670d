"""The MANIFEST diff a promotion makes: the official tree scanned without and with the run's folders.

Both sides are `generate_manifest.py`'s rules over the same folders (`manifest_scan`), so the diff is what
the promotion changes and nothing else (not judge scores or a selection filter the file was last written
with). A promoted trial that takes an entry's place is `replaced` (reward before → after); one that loses
to an older result because only that one had agent output is `kept` ("zero-token results never
overwrite"); a key's figures (pass rate, mean reward) are shown before → after.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bot.csb.promotion.manifest_file import RunEntry
from bot.csb.promotion.manifest_scan import Scan, Trial, run_entry, scan
from bot.domain.promotion import (
    EntryChange,
    KeyChange,
    ManifestDiff,
    RunSummary,
    TaskChange,
    TaskResult,
)


def official_folders(runs_dir: Path) -> list[tuple[str, Path]]:
    """The run folders of the official tree (`runs/official[/_raw]`), by name."""
    if not runs_dir.is_dir():
        return []
    return [(entry.name, entry) for entry in sorted(runs_dir.iterdir()) if entry.is_dir()]


def promotion_diff(
    official: Iterable[tuple[str, Path]], promoted: Iterable[tuple[str, Path]]
) -> ManifestDiff:
    """`promoted`: each run folder being promoted, under the name it will have in the official tree."""
    official = list(official)
    promoted = list(promoted)
    names = {name for name, _ in promoted}
    cache: dict[tuple[str, Path], Trial | None] = {}
    before, after = scan(official, cache), scan([*official, *promoted], cache)
    return diff_scans(before, after, names)


def diff_scans(before: Scan, after: Scan, promoted: set[str]) -> ManifestDiff:
    changes: list[TaskChange] = []
    for key in sorted(after.latest):
        for task, trial in sorted(after.latest[key].items()):
            if trial.run_dir not in promoted:
                continue
            old = before.latest.get(key, {}).get(task)
            changes.append(
                TaskChange(
                    key=key,
                    task=task,
                    change=EntryChange.ADDED if old is None else EntryChange.REPLACED,
                    before=_result(old),
                    after=_result(trial),
                )
            )
    for decision in after.decisions:
        loser, winner = decision.loser, decision.winner
        if loser.run_dir in promoted and winner.run_dir not in promoted and decision.output:
            changes.append(
                TaskChange(
                    key=loser.key,
                    task=loser.task,
                    change=EntryChange.KEPT,
                    before=_result(winner),
                    after=_result(loser),
                )
            )
    touched = sorted({change.key for change in changes})
    keys = [
        KeyChange(key=key, before=_summary(before, key), after=_summary(after, key) or RunSummary())
        for key in touched
    ]
    return ManifestDiff(tasks=tuple(changes), keys=tuple(keys))


def _summary(side: Scan, key: str) -> RunSummary | None:
    trials = side.latest.get(key)
    if not trials:
        return None
    return summary_of(run_entry(key, list(trials.values())))


def summary_of(entry: RunEntry) -> RunSummary:
    return RunSummary(
        task_count=entry.task_count,
        passed=entry.passed,
        failed=entry.failed,
        errored=entry.errored,
        mean_reward=entry.mean_reward,
    )


def _result(trial: Trial | None) -> TaskResult | None:
    if trial is None:
        return None
    return TaskResult(status=trial.entry.status, reward=trial.entry.reward, run_dir=trial.run_dir)
