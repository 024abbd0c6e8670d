"""What a promotion's card showed, as a digest checked twice: at the deciding approval and again when
the promotion starts executing, with the same function.

It is scoped to what the promotion touches: every file of the run's own folders (path, size, mtime),
and only the MANIFEST entries its diff would add, replace or keep (each `<suite>/<config>` key and task:
the task's entry in `runs` and its `run_history`), never the whole file. So another promotion of other
suites, executed in between, leaves it as it was, while one that changed the same entries voids it.

The digest is two halves, `<files>.<entries>`, so a voided promotion can say which of the two changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.csb.promotion.layout import MANIFEST_NAME, OFFICIAL, STAGING
from bot.csb.promotion.manifest_file import Manifest, ManifestUnreadable, read_manifest
from bot.domain.promotion import ManifestDiff, PromotionPreview

_HALF = 12  # hex digits of each half


@dataclass(frozen=True)
class ShownDigest:
    files: str  # the run's folders' files
    entries: str  # the MANIFEST entries the diff touches
    problem: str | None = None  # why the MANIFEST could not be read (its half says "unreadable")

    def __str__(self) -> str:
        return f"{self.files}.{self.entries}"


def touched_entries(diff: ManifestDiff) -> list[tuple[str, str]]:
    """The MANIFEST entries a promotion would add, replace or keep: (`<suite>/<config>`, task), sorted."""
    return sorted({(change.key, change.task) for change in diff.tasks})


def promotion_digest(
    folders: Iterable[Path], manifest: Path, touched: Iterable[tuple[str, str]]
) -> ShownDigest:
    """The digest of the run folders `folders` and, of the MANIFEST at `manifest`, the `touched` entries."""
    entries, problem = _entries_digest(manifest, touched)
    return ShownDigest(files=_files_digest(folders), entries=entries, problem=problem)


def preview_digest(repo: Path, preview: PromotionPreview) -> ShownDigest:
    """The digest of what `preview` showed, read from the checkout as it is now: the folders it would
    move (those with a destination) and the entries of its diff."""
    folders = [repo / STAGING / f.folder for f in preview.folders if f.destination is not None]
    return promotion_digest(folders, repo / OFFICIAL / MANIFEST_NAME, touched_entries(preview.diff))


def drift(shown: str, now: ShownDigest) -> str | None:
    """Why what the card showed no longer holds (None: it does), as a fact for the card and the audit."""
    if str(now) == shown:
        return None
    if now.problem is not None:
        return now.problem
    files, dot, entries = shown.partition(".")
    changed = []
    if files != now.files:
        changed.append("the run's files")
    if entries != now.entries:
        changed.append("the MANIFEST entries this promotion would change")
    if not dot or not changed:  # a digest of another form (an earlier version's): no halves to tell
        return "the run's files or the MANIFEST entries this promotion would change changed"
    return " and ".join(changed) + " changed"


def _files_digest(folders: Iterable[Path]) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for current, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                path = Path(current, name)
                try:
                    stat = path.lstat()
                except OSError:
                    continue
                digest.update(
                    f"{path.relative_to(folder.parent)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
                )
    return digest.hexdigest()[:_HALF]


def _entries_digest(manifest: Path, touched: Iterable[tuple[str, str]]) -> tuple[str, str | None]:
    """The touched entries' half, and why the MANIFEST could not be read (None when it could)."""
    digest = hashlib.sha256()
    try:
        read = read_manifest(manifest)
    except ManifestUnreadable as exc:
        digest.update(b"unreadable")
        return digest.hexdigest()[:_HALF], str(exc)
    for key, task in touched:
        digest.update(json.dumps([key, task, *_entry(read, key, task)], sort_keys=True).encode() + b"\n")
    return digest.hexdigest()[:_HALF], None


def _entry(manifest: Manifest | None, key: str, task: str) -> tuple[object, object]:
    """The task's entry in `runs` and its `run_history`, as JSON values (None where there is none)."""
    if manifest is None:
        return None, None
    run = manifest.runs.get(key)
    entry = None if run is None else run.tasks.get(task)
    history = manifest.run_history.get(key, {}).get(task)
    return (
        None if entry is None else entry.model_dump(mode="json", exclude_unset=True),
        None if history is None else history.model_dump(mode="json", exclude_unset=True),
    )
