"""`runs/official/MANIFEST.json` read and written in `generate_manifest.py`'s shape, field for field.

The reader refuses a file that is not JSON, larger than the cap or of another shape, with words for the
card; the writer writes the same shape (2-space indent as CSB's script), atomically: a crash leaves the
old file or the new one, never half of one. Optional fields (`timed_out`, `timeout_seconds`,
`quality_flags`, `has_quality_issues`, `mean_judge_score`, `judge_count`) appear only where set, and any
field the bot does not know is kept as read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.csb.json_file import MIB, UnreadableJson, read_json

MANIFEST_LIMIT = 64 * MIB  # every official run's tasks: large, but not without bound
DESCRIPTION = "Canonical run manifest for CodeScaleBench evaluation"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class TaskEntry(_Open):
    status: str
    reward: float
    has_trajectory: bool = False
    has_cost: bool = False
    judge_score: float | None = None
    judge_model: str | None = None
    judge_dimensions: Any = None
    judge_confidence: Any = None
    timed_out: bool | None = None
    timeout_seconds: float | None = None


class RunEntry(_Open):
    run_id: str
    model: str
    timestamp: str
    task_count: int
    passed: int
    failed: int
    errored: int
    mean_reward: float
    tasks: dict[str, TaskEntry]


class HistoryRun(_Open):
    started_at: str
    reward: float
    status: str
    is_paired: bool
    run_dir: str


class TaskHistory(_Open):
    n_runs: int
    mean_reward: float
    std_reward: float
    runs: list[HistoryRun]


class Manifest(_Open):
    description: str = DESCRIPTION
    generated: str
    total_tasks: int
    total_runs: int
    runs: dict[str, RunEntry]
    run_history: dict[str, dict[str, TaskHistory]] = {}


def latest_run_dir(manifest: Manifest, key: str) -> str | None:
    """The run folder of the newest trial `run_history` holds for `<suite>/<config>` (the last promotion
    that counted for it); None when the MANIFEST has no history for the key."""
    runs = [run for task in manifest.run_history.get(key, {}).values() for run in task.runs]
    return max(runs, key=lambda run: run.started_at).run_dir if runs else None


class ManifestUnreadable(ValueError):
    """The MANIFEST cannot be used; the message says why, in words for the card."""


def read_manifest(path: Path, limit: int = MANIFEST_LIMIT) -> Manifest | None:
    """The MANIFEST, or None when there is none yet; ManifestUnreadable when it is not one."""
    try:
        data = read_json(path, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManifestUnreadable(f"MANIFEST.json cannot be read: {exc.strerror or exc}") from None
    except UnreadableJson as exc:
        raise ManifestUnreadable(f"MANIFEST.json {exc}") from None
    return parse_manifest(data)


def parse_manifest(data: Any) -> Manifest:
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the top level"
        raise ManifestUnreadable(
            f"MANIFEST.json is not in generate_manifest.py's shape: {where}: {problem['msg']}"
        ) from None


def manifest_json(manifest: Manifest) -> dict[str, Any]:
    """The MANIFEST as CSB writes it (fields never set are left out, as CSB leaves them out)."""
    return manifest.model_dump(mode="json", exclude_unset=True)


def write_manifest(path: Path, manifest: Manifest) -> None:
    """Write atomically: a temporary file beside it, flushed, then renamed over the old one."""
    text = json.dumps(manifest_json(manifest), indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.writing")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
