"""`quarantine_invalid_tasks.py`'s one rule, extended to the current lanes and labelled so.

CSB's script sets aside a task whose `sourcegraph_full` trial the trace audit calls `failed` (exception →
errored; reward, else score, above 0 → passed; else failed) with `(mcp_total_calls or 0) == 0`: every
config of that `(suite, run_dir, task)` moves together, to
`<runs>/archive/qa_needed/failed_zero_mcp_calls/<path under runs>`. The bot applies the same rule to every
MCP lane (`is_mcp_config`); a finding on a lane other than `sourcegraph_full` is marked `extended`, since
CSB's script would not have seen it. A count that is unknown (no trace) is zero to CSB's `or 0`, and
the candidate says the count was unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.csb.promotion.layout import RESULT, config_folders, manifest_trial_dirs
from bot.csb.promotion.manifest_scan import normalise_task_name
from bot.csb.trials import csb_task_name
from bot.csb.verdicts.bounded_read import Notes, read_object
from bot.csb.verdicts.config_names import is_mcp_config
from bot.csb.verdicts.lane_verdict import RESULT_LIMIT, is_trial_record
from bot.csb.verdicts.trace_audit import audit_trace
from bot.domain.promotion import QuarantineCandidate

REASON = "failed_zero_mcp_calls"
LEGACY_CONFIG = "sourcegraph_full"
QUARANTINE_DIR = f"archive/qa_needed/{REASON}"


def audit_status(result: Mapping[str, Any]) -> str:
    """audit_traces.py's status: exception → errored; reward (else score) above 0 → passed; else failed."""
    if result.get("exception_info") is not None:
        return "errored"
    verifier = result.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, Mapping) else None
    rewards = rewards if isinstance(rewards, Mapping) else {}
    value = rewards.get("reward", rewards.get("score"))
    reward = value if isinstance(value, int | float) and not isinstance(value, bool) else 0
    return "passed" if reward > 0 else "failed"


def candidates(run_dir: Path) -> tuple[QuarantineCandidate, ...]:
    """The MCP-lane trials of the run folder CSB's rule sets aside."""
    found: list[QuarantineCandidate] = []
    for config_dir in config_folders(run_dir):
        if not is_mcp_config(config_dir.name):
            continue
        for trial in manifest_trial_dirs(config_dir):
            notes = Notes()
            result = read_object(trial / RESULT, notes, limit=RESULT_LIMIT)
            if result is None or not is_trial_record(result) or audit_status(result) != "failed":
                continue
            calls = audit_trace(trial, notes).mcp_calls
            if (calls or 0) != 0:
                continue
            name = result.get("task_name")
            task = name if isinstance(name, str) and name else csb_task_name(trial.name)
            found.append(
                QuarantineCandidate(
                    folder=run_dir.name,
                    config=config_dir.name,
                    task=normalise_task_name(task),
                    trial_dir=str(trial.relative_to(run_dir)),
                    mcp_calls=calls,
                    extended=config_dir.name != LEGACY_CONFIG,
                )
            )
    return tuple(found)


def trials_to_move(run_dir: Path, chosen: tuple[QuarantineCandidate, ...]) -> list[Path]:
    """Every config's trial of each chosen task ("keep paired analysis consistent"), relative to the run."""
    tasks = {candidate.task for candidate in chosen}
    moving: list[Path] = []
    for config_dir in config_folders(run_dir):
        for trial in manifest_trial_dirs(config_dir):
            result = read_object(trial / RESULT, Notes(), limit=RESULT_LIMIT) or {}
            name = result.get("task_name")
            task = name if isinstance(name, str) and name else csb_task_name(trial.name)
            if normalise_task_name(task) in tasks:
                moving.append(trial.relative_to(run_dir))
    return moving


def quarantine_target(runs_dir: Path, relative: Path, now: datetime) -> Path:
    """`<runs>/archive/qa_needed/failed_zero_mcp_calls/<relative>`, suffixed `__<UTC stamp>` if taken."""
    target = runs_dir / QUARANTINE_DIR / relative
    if target.exists():
        target = target.with_name(f"{target.name}__{now.strftime('%Y%m%dT%H%M%SZ')}")
    return target
