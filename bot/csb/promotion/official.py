"""The official results as the MANIFEST states them, per suite and config, with the last promotion of each.

One reader for `/csb official` and App Home. The last promotion of a `<suite>/<config>` is the run folder
of the newest trial in its `run_history`; who approved it is that folder's `triage.json` (CSB's record,
written by the bot's promotion or by hand), read only inside the official tree.
"""

from __future__ import annotations

from pathlib import Path

from bot.csb.paths import inside
from bot.csb.promotion.layout import MANIFEST_NAME, OFFICIAL, official_runs_dir
from bot.csb.promotion.manifest_diff import summary_of
from bot.csb.promotion.manifest_file import latest_run_dir, read_manifest
from bot.csb.promotion.triage import reviewed
from bot.domain.errors import InfraError
from bot.domain.promotion import OfficialLine

MANIFEST_PATH = f"{OFFICIAL}/{MANIFEST_NAME}"


def official_lines(repo: Path) -> list[OfficialLine] | None:
    """Every `runs` key of the MANIFEST, sorted; None when there is no MANIFEST (ManifestUnreadable when
    it is not one)."""
    manifest = read_manifest(repo / MANIFEST_PATH)
    if manifest is None:
        return None
    runs_dir = official_runs_dir(repo)
    lines = []
    for key, entry in sorted(manifest.runs.items()):
        suite, _, config = key.partition("/")
        last = latest_run_dir(manifest, key)
        review = None
        if last is not None:
            try:  # a name from the MANIFEST: it must name a folder of the official tree
                review = reviewed(inside(runs_dir, runs_dir / last))
            except InfraError:
                review = None
        lines.append(
            OfficialLine(
                suite=suite,
                config=config,
                model=entry.model,
                timestamp=entry.timestamp,
                figures=summary_of(entry),
                last_run_dir=last,
                reviewer=review[0] if review else None,
                reviewed_at=review[1] if review else None,
            )
        )
    return lines
