"""The official reference: `runs/official/MANIFEST.json`'s current entries as one side of a comparison.

`runs["<suite>/<config>"].tasks[<task key>]` holds the MANIFEST's status (`passed|failed|errored`, its own
vocabulary) and reward of the latest valid trial (`OPERATIONS.md` §2). A task with quality issues
(`has_quality_issues`: a flag in {invalid, bad_setup, hallucination, verifier_flag}) is not a result.
The MANIFEST carries no cost and no agent, so those are unknown on this side. Blocking I/O; callers
run it in a thread.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from bot.csb.counterparts import MANIFEST_PATH, MANIFEST_SIZE_LIMIT
from bot.csb.json_file import read_json
from bot.csb.verdicts.config_names import is_mcp_config
from bot.domain.compare import Side, TaskResult
from bot.domain.spec import LaneRole
from bot.domain.verdict import ManifestStatus

OFFICIAL = "official"
QUALITY_ISSUES = "quality_issues"  # the rule named on an official task the MANIFEST flags


class NoManifest(LookupError):
    """The checkout has no `runs/official/MANIFEST.json`."""


def read_manifest(repo: Path) -> dict[str, Any]:
    """The parsed MANIFEST; NoManifest when absent, UnreadableJson or OSError when unreadable."""
    try:
        data = read_json(repo / MANIFEST_PATH, MANIFEST_SIZE_LIMIT)
    except FileNotFoundError:
        raise NoManifest(MANIFEST_PATH) from None
    if not isinstance(data, dict):
        raise NoManifest(MANIFEST_PATH)
    return data


def official_side(
    manifest: Mapping[str, Any], suites: Collection[str], configs: Collection[str] | None
) -> Side:
    """The MANIFEST's entries for these suites (and configs; None: every config), as one side."""
    runs = manifest.get("runs")
    results: list[TaskResult] = []
    models: list[str] = []
    for key, run in runs.items() if isinstance(runs, dict) else ():
        suite, _, config = str(key).rpartition("/")
        tasks = run.get("tasks") if isinstance(run, dict) else None
        if (
            suite not in suites
            or (configs is not None and config not in configs)
            or not isinstance(tasks, dict)
        ):
            continue
        model = run.get("model")
        if isinstance(model, str) and model not in models:
            models.append(model)
        role = LaneRole.MCP if is_mcp_config(config) else LaneRole.BASELINE
        for task, entry in tasks.items():
            result = _task(str(task), suite, config, role, entry)
            if result is not None:
                results.append(result)
    return Side(label=OFFICIAL, results=tuple(results), model=", ".join(models) or None)


def manifest_suites(manifest: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each suite of the MANIFEST with its configs, in the file's order."""
    runs = manifest.get("runs")
    found: dict[str, list[str]] = {}
    for key in runs if isinstance(runs, dict) else ():
        suite, _, config = str(key).rpartition("/")
        found.setdefault(suite, []).append(config)
    return {suite: tuple(configs) for suite, configs in found.items()}


def _task(task: str, suite: str, config: str, role: LaneRole, entry: Any) -> TaskResult | None:
    if not isinstance(entry, dict) or entry.get("status") not in set(ManifestStatus):
        return None
    reward = entry.get("reward")
    return TaskResult(
        task=task,
        suite=suite,
        config=config,
        role=role,
        status=ManifestStatus(entry["status"]),
        reward=float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None,
        invalid=QUALITY_ISSUES if entry.get("has_quality_issues") else None,
    )
