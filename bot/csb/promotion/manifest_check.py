"""Whether a MANIFEST written after a promotion says what the promotion's diff said it would.

CSB's `generate_manifest.py` may differ from the bot's reading of its rules (another version in the
checkout, a judge-scores file, a selection filter): after a promotion the bot compares the file written
with the diff it showed, and every difference is reported, never passed over. A task added or replaced
must be there with the promoted status and reward; a task kept must still hold the older result; each
key's figures must be the ones shown "after".
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.csb.promotion.manifest_diff import summary_of
from bot.csb.promotion.manifest_file import Manifest
from bot.domain.promotion import EntryChange, ManifestDiff, RunSummary, TaskResult


@dataclass(frozen=True)
class Difference:
    key: str
    task: str | None  # None: the key's figures
    expected: str
    found: str


def differences(manifest: Manifest, diff: ManifestDiff) -> list[Difference]:
    found: list[Difference] = []
    for change in diff.tasks:
        expected = change.before if change.change is EntryChange.KEPT else change.after
        run = manifest.runs.get(change.key)
        entry = run.tasks.get(change.task) if run is not None else None
        written = None if entry is None else TaskResult(status=entry.status, reward=entry.reward)
        if expected is not None and (written is None or _result(written) != _result(expected)):
            found.append(
                Difference(
                    change.key,
                    change.task,
                    _result(expected),
                    "absent" if written is None else _result(written),
                )
            )
    for key in diff.keys:
        run = manifest.runs.get(key.key)
        written_summary = None if run is None else summary_of(run)
        if written_summary != key.after:
            found.append(Difference(key.key, None, _figures(key.after), _figures(written_summary)))
    return found


def _result(result: TaskResult) -> str:
    return f"{result.status} {result.reward:.4f}"


def _figures(summary: RunSummary | None) -> str:
    if summary is None:
        return "absent"
    return (
        f"{summary.task_count} tasks, {summary.passed} passed, {summary.failed} failed, "
        f"{summary.errored} errored, mean reward {summary.mean_reward:.3f}"
    )
