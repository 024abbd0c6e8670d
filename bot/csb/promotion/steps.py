"""The file steps of a promotion, each safe to run again, and the settling of one a crash interrupted.

A promotion is: quarantine the chosen tasks (every config of each, to CSB's `archive/qa_needed/…` under the
official runs folder, with its report file), write `triage.json` into the run folder, move the folder
(one `rename`: the run is in staging or in official, never both, never half), then write the MANIFEST.
Each step checks what is already done before acting, so a step repeated after a crash does nothing twice.
`settle` looks at the tree alone and says which way an interrupted promotion goes: before the move it is
undone (quarantined trials moved back, triage.json removed); after the move it is finished (the MANIFEST
written from the folders as they are).

Driven by the engine's promotion runner (`bot.engine.promotion_runner`, through `execute.py`), which
journals each step in the promotion's row and calls `settle` for a failed or interrupted one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.csb.promotion.manifest_diff import official_folders
from bot.csb.promotion.manifest_file import write_manifest
from bot.csb.promotion.manifest_scan import build_manifest, scan
from bot.csb.promotion.quarantine import QUARANTINE_DIR, REASON
from bot.csb.promotion.triage import TRIAGE, write_triage


@dataclass(frozen=True)
class Plan:
    """One run folder's promotion, every path fixed when it was approved."""

    source: Path  # runs/staging/<run>
    target: Path  # runs/official[/_raw]/<run>[__promoted_<stamp>]
    official_runs: Path  # runs/official or runs/official/_raw (CSB's raw_runs_dir)
    manifest: Path  # runs/official/MANIFEST.json
    quarantine: tuple[Path, ...]  # trial folders relative to the run folder
    triage: dict[str, str]
    stamp: str  # the approval's time, `%Y%m%dT%H%M%SZ`: names the quarantine report

    def quarantined(self, relative: Path) -> Path:
        return self.official_runs / QUARANTINE_DIR / self.source.name / relative


class Settled(StrEnum):
    UNDONE = "undone"  # the run is back in staging as it was
    FINISHED = "finished"  # the run is in official and the MANIFEST matches the folders
    LOST = "lost"  # the run folder is in neither place: nothing is touched, an operator must look


def quarantine(plan: Plan) -> None:
    """Move each chosen trial aside (a trial already there is left), then write CSB's report file."""
    moves = []
    for relative in plan.quarantine:
        source, dest = plan.source / relative, plan.quarantined(relative)
        if source.is_dir() and not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, dest)
        moves.append({"source": str(relative), "dest": str(dest.relative_to(plan.official_runs))})
    if moves:
        report = _report(plan)
        report.parent.mkdir(parents=True, exist_ok=True)
        body = {"generated_at": plan.stamp, "reason": REASON, "dry_run": False, "moves": moves}
        report.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


def triage(plan: Plan) -> None:
    if plan.source.is_dir():
        write_triage(plan.source, plan.triage)


def move(plan: Plan) -> None:
    """One rename; a folder already at the target (and none in staging) is this move done before."""
    if plan.target.is_dir() and not plan.source.exists():
        return
    plan.target.parent.mkdir(parents=True, exist_ok=True)
    if plan.target.exists():
        raise FileExistsError(f"{plan.target} appeared after the promotion was approved")
    os.rename(plan.source, plan.target)


def regenerate(plan: Plan, now: datetime) -> None:
    """The bot's writer of generate_manifest.py's rules over the official folders as they are now."""
    write_manifest(plan.manifest, build_manifest(scan(official_folders(plan.official_runs)), now))


def settle(plan: Plan, now: datetime) -> Settled:
    """An interrupted promotion made consistent, from the tree alone."""
    if plan.target.is_dir() and not plan.source.exists():
        regenerate(plan, now)
        return Settled.FINISHED
    if not plan.source.is_dir():
        return Settled.LOST
    for relative in plan.quarantine:
        source, dest = plan.source / relative, plan.quarantined(relative)
        if dest.is_dir() and not source.exists():
            source.parent.mkdir(parents=True, exist_ok=True)
            os.rename(dest, source)
    written = plan.source / TRIAGE
    try:
        if read_json(written, MIB) == plan.triage:
            written.unlink()  # ours; a triage.json with other content is not ours and is left
    except FileNotFoundError:
        pass
    except (OSError, UnreadableJson):
        written.unlink(missing_ok=True)  # half written by the interrupted step: ours
    _report(plan).unlink(missing_ok=True)
    return Settled.UNDONE


def _report(plan: Plan) -> Path:
    return plan.official_runs / "archive" / "qa_needed" / f"quarantine_report_{plan.stamp}.json"
