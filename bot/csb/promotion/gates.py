"""`promote_run.py`'s `validate_run` and `check_gates`, for one run folder, exactly as it decides them.

Counts are the sums over config folders of `<config>/flagged_tasks.json`. An existing file is reused as
is, however old (CSB does so; the card shows its age); one written for another config is refused, since
its counts would judge the wrong lane. Where there is none the bot applies validate_task_run.py's rules
itself (`bot.csb.verdicts.task_validation`) instead of writing the file into a staging run it only reads.
The gates, in CSB's order: a validation error; no task folders; criticals; tasks without result.json;
warnings above `max_warnings` (strict `>`); then a `task_metrics.json` that cannot be extracted.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.csb.promotion.layout import (
    FLAGGED_TASKS,
    RESULT,
    TASK_METRICS,
    config_folders,
    promote_task_dirs,
)
from bot.csb.verdicts.bounded_read import Notes, read_object
from bot.csb.verdicts.lane_verdict import RESULT_LIMIT, is_trial_record
from bot.csb.verdicts.task_validation import validate_task
from bot.domain.promotion import (
    FIRST_FLAGGED,
    ConfigFlags,
    FlaggedTask,
    FlagSource,
    FolderCheck,
    Gate,
    GateName,
    GateReport,
)

FLAGGED_LIMIT = 16 * MIB
_SEVERITIES = ("CRITICAL", "WARNING", "INFO")


def check_folder(run_dir: Path, *, extract_script: bool, now: float | None = None) -> FolderCheck:
    """`validate_run` of a run folder; `extract_script`: the checkout has `extract_task_metrics.py`."""
    folder = run_dir.name
    if not run_dir.is_dir():
        return FolderCheck(folder=folder, error=f"the run folder `{folder}` does not exist")
    configs = config_folders(run_dir)
    if not configs:
        return FolderCheck(folder=folder, error=f"No config directories found in {folder}")
    counted: list[ConfigFlags] = []
    total = with_results = 0
    missing: list[str] = []
    no_metrics: list[str] = []
    for config_dir in configs:
        tasks = promote_task_dirs(config_dir)
        total += len(tasks)
        for task in tasks:
            name = f"{config_dir.name}/{task.relative_to(config_dir)}"
            if (task / RESULT).is_file():
                with_results += 1
                if not (task / TASK_METRICS).is_file():
                    no_metrics.append(name)
            else:
                missing.append(name)
        try:
            counted.append(config_flags(config_dir, now=now))
        except ValueError as exc:
            return FolderCheck(folder=folder, error=str(exc))
    return FolderCheck(
        folder=folder,
        configs=tuple(counted),
        total_tasks=total,
        tasks_with_results=with_results,
        missing_results=tuple(missing),
        missing_metrics=tuple(no_metrics),
        extraction_problem=(
            None
            if extract_script or not no_metrics
            else "the checkout has no scripts/running/extract_task_metrics.py to write them"
        ),
    )


def config_flags(config_dir: Path, *, now: float | None = None) -> ConfigFlags:
    """The config's flags: its `flagged_tasks.json` reused, else validate_task_run.py's rules applied.
    ValueError (words for the card) for a file that is unreadable, of the wrong shape or another config's."""
    path = config_dir / FLAGGED_TASKS
    try:
        data = read_json(path, FLAGGED_LIMIT)
    except FileNotFoundError:
        return _computed(config_dir)
    except (OSError, UnreadableJson) as exc:
        raise ValueError(f"`{config_dir.name}/{FLAGGED_TASKS}` cannot be read: {exc}") from None
    return _reused(config_dir, data, path.stat().st_mtime, time.time() if now is None else now)


def _reused(config_dir: Path, data: Any, mtime: float, now: float) -> ConfigFlags:
    where = f"`{config_dir.name}/{FLAGGED_TASKS}`"
    if not isinstance(data, dict):
        raise ValueError(f"{where} is not a JSON object")
    if data.get("config") not in (None, config_dir.name):
        raise ValueError(f"{where} was written for config `{data.get('config')}`, not `{config_dir.name}`")
    counts = []
    for key in ("critical_count", "warning_count", "info_count"):
        value = data.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{where} has `{key}` {value!r}, not a count")
        counts.append(value)
    raw_flags = data.get("flags", [])
    if not isinstance(raw_flags, list):
        raise ValueError(f"{where} has `flags` that is not a list")
    flags = tuple(
        FlaggedTask(
            task_id=str(item.get("task_id", "")),
            rule=str(item.get("rule", "")),
            severity=str(item.get("severity", "")),
            message=str(item.get("message", "")),
        )
        for item in raw_flags
        if isinstance(item, dict)
    )
    return ConfigFlags(
        config=config_dir.name,
        source=FlagSource.REUSED,
        age_seconds=max(0.0, now - mtime),
        critical_count=counts[0],
        warning_count=counts[1],
        info_count=counts[2],
        flags=flags,
    )


def _computed(config_dir: Path) -> ConfigFlags:
    """validate_task_run.py's pass over the config's trials (task_metrics.json first, result.json adding)."""
    flags: list[FlaggedTask] = []
    for task in promote_task_dirs(config_dir):
        notes = Notes()
        result = read_object(task / RESULT, notes, limit=RESULT_LIMIT)
        metrics = read_object(task / TASK_METRICS, notes)
        if result is not None and not is_trial_record(result):
            result = None
        if result is None and metrics is None:
            continue
        task_id = str((metrics or {}).get("task_id") or (result or {}).get("task_name") or task.name)
        for flag in validate_task(metrics, result, task_id, config_dir.name, notes):
            flags.append(
                FlaggedTask(task_id=task_id, rule=flag.rule, severity=flag.severity, message=flag.message)
            )
    count = {severity: sum(flag.severity == severity for flag in flags) for severity in _SEVERITIES}
    return ConfigFlags(
        config=config_dir.name,
        source=FlagSource.COMPUTED,
        critical_count=count["CRITICAL"],
        warning_count=count["WARNING"],
        info_count=count["INFO"],
        flags=tuple(flags),
    )


def check_gates(check: FolderCheck, max_warnings: int) -> GateReport:
    """`check_gates(result, max_warnings, force)` without `force`: the caller shows a forced bypass."""
    flags = [flag for config in check.configs for flag in config.flags]

    def first(severity: str) -> tuple[FlaggedTask, ...]:
        return tuple(flag for flag in flags if flag.severity == severity)[:FIRST_FLAGGED]

    missing = check.total_tasks - check.tasks_with_results
    gates = (
        Gate(name=GateName.VALIDATION_ERROR, failed=check.error is not None, detail=check.error or ""),
        Gate(name=GateName.NO_TASKS, failed=check.error is None and check.total_tasks == 0),
        Gate(
            name=GateName.CRITICALS,
            failed=check.critical_count > 0,
            count=check.critical_count,
            first=first("CRITICAL"),
        ),
        Gate(
            name=GateName.MISSING_RESULTS,
            failed=missing > 0,
            count=missing,
            detail=f"{check.tasks_with_results}/{check.total_tasks}",
            first=tuple(
                FlaggedTask(task_id=name, rule="missing_result", severity="FAIL", message="no result.json")
                for name in check.missing_results[:FIRST_FLAGGED]
            ),
        ),
        Gate(
            name=GateName.WARNINGS,
            failed=check.warning_count > max_warnings,
            count=check.warning_count,
            limit=max_warnings,
            first=first("WARNING"),
        ),
        Gate(
            name=GateName.METRICS_EXTRACTION,
            failed=check.extraction_problem is not None,
            count=len(check.missing_metrics),
            detail=check.extraction_problem or "",
            first=tuple(
                FlaggedTask(
                    task_id=name, rule="missing_task_metrics", severity="FAIL", message="no task_metrics.json"
                )
                for name in check.missing_metrics[:FIRST_FLAGGED]
            ),
        ),
    )
    return GateReport(folder=check.folder, gates=gates)
