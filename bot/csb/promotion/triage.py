"""`triage.json` of an official run folder, with the fields `official_integrity.read_triage` requires.

`decision` ∈ {include, exclude, pending} and non-empty `reason_code`, `reviewed_at`, `reviewer`; a
promotion writes `include`, its reason code, the time of the approval and the approvers.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.csb.json_file import UnreadableJson, read_json

TRIAGE = "triage.json"
DECISIONS = frozenset({"include", "exclude", "pending"})
FIELDS = ("reason_code", "reviewed_at", "reviewer")
PROMOTED = "promoted_by_approval"
FORCED = "promoted_with_force"


def triage_record(*, forced: bool, reviewed_at: datetime, reviewers: list[str]) -> dict[str, Any]:
    return {
        "decision": "include",
        "reason_code": FORCED if forced else PROMOTED,
        "reviewed_at": reviewed_at.isoformat(),
        "reviewer": ", ".join(reviewers),
    }


def write_triage(run_dir: Path, record: dict[str, Any]) -> None:
    (run_dir / TRIAGE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def reviewed(run_dir: Path) -> tuple[str, str] | None:
    """`(reviewer, reviewed_at)` of a valid `include` triage.json; None without one."""
    try:
        data = read_json(run_dir / TRIAGE, 1024 * 1024)
    except (OSError, UnreadableJson):
        return None
    if not isinstance(data, dict) or _problem(data) is not None or data["decision"] != "include":
        return None
    return str(data["reviewer"]), str(data["reviewed_at"])


def triage_problem(run_dir: Path) -> str | None:
    """`read_triage`'s verdict: None when valid, else `missing | invalid_json | invalid_type |
    invalid_decision | missing_<field>`."""
    try:
        data = read_json(run_dir / TRIAGE, 1024 * 1024)
    except FileNotFoundError:
        return "missing"
    except (OSError, UnreadableJson):
        return "invalid_json"
    if not isinstance(data, dict):
        return "invalid_type"
    return _problem(data)


def _problem(data: dict[str, Any]) -> str | None:
    if data.get("decision") not in DECISIONS:
        return "invalid_decision"
    for name in FIELDS:
        if not data.get(name):
            return f"missing_{name}"
    return None
