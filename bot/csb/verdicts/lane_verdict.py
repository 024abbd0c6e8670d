"""Every CSB verdict on one trial folder, read once when its lane ends (see `bot.domain.verdict`).

Blocking (reads files within `bounded_read`'s limits): the engine calls it in a worker thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.csb.trials import trial_task_part
from bot.csb.verdicts.bounded_read import Notes, read_object
from bot.csb.verdicts.config_names import is_mcp_config
from bot.csb.verdicts.cost import cost_report
from bot.csb.verdicts.fingerprints import corrupt_result, fingerprint_error
from bot.csb.verdicts.manifest_status import manifest_status
from bot.csb.verdicts.status_tool import status_tool_status
from bot.csb.verdicts.task_validation import validate_task
from bot.csb.verdicts.trace_audit import audit_trace
from bot.domain.verdict import LaneVerdict, ManifestRule, ManifestStatus, StatusToolStatus

RESULT = "result.json"
TASK_METRICS = "task_metrics.json"
RESULT_LIMIT = 4 * 1024 * 1024  # a trial's result.json is a few kilobytes (as `bot.csb.results` reads it)


def judge_trial(trial_dir: Path, config: str, *, result: dict[str, Any] | None = None) -> LaneVerdict | None:
    """The verdicts of the trial in `trial_dir`, run as lane `config`; None when its result.json is a
    job's (batch-level) record, which no CSB tool takes for a trial.

    `result`: its result.json as the caller read it already (the engine reads it for the outcome
    first), so it is not read and parsed a second time; without it, or when it could not be read, the
    file is read here, and what was wrong with it goes into the verdict."""
    notes = Notes()
    if result is None:
        result = read_object(trial_dir / RESULT, notes, limit=RESULT_LIMIT)
    if result is None:
        return _corrupt(config, notes)
    if not is_trial_record(result):
        return None
    metrics = read_object(trial_dir / TASK_METRICS, notes)
    trace = audit_trace(trial_dir, notes)
    manifest = manifest_status(
        result, has_trajectory=trace.has_trajectory, transcript_lines=trace.transcript_lines, notes=notes
    )
    mcp_calls = trace.mcp_calls if trace.mcp_calls is not None else _metrics_count(metrics, "tool_calls_mcp")
    cost = cost_report(metrics, result, notes)
    task_id = str(result.get("task_name") or trial_task_part(trial_dir.name) or trial_dir.name)
    return LaneVerdict(
        config=config,
        status_tool=status_tool_status(result),
        manifest_status=manifest.status,
        manifest_rule=manifest.rule,
        manifest_reward=manifest.reward,
        timed_out=manifest.timed_out,
        timeout_seconds=manifest.timeout_seconds,
        fingerprint=fingerprint_error(result.get("exception_info")),
        flags=validate_task(metrics, result, task_id, config, notes),
        mcp_calls=mcp_calls,
        deep_search_calls=trace.deep_search_calls,
        mcp_tools_available=trace.mcp_tools_available,
        auth_errors=trace.auth_errors,
        mcp_errors=trace.mcp_errors,
        contaminated=not is_mcp_config(config) and bool(mcp_calls),
        tokens=cost.tokens,
        cost_usd=cost.cost_usd,
        cost_source=cost.source,
        unread=tuple(notes.items),
    )


def is_trial_record(result: dict[str, Any]) -> bool:
    """CSB's scanners skip a result.json with `n_total_trials` and no `task_name`: a job's, not a trial's."""
    return not ("n_total_trials" in result and "task_name" not in result)


def _corrupt(config: str, notes: Notes) -> LaneVerdict:
    """An unreadable result.json: `errored` with `result_json_corrupt` to the status tool; the MANIFEST
    cannot read it either, and the bot counts it `errored` there too (out of the statistics)."""
    problem = notes.items[0] if notes.items else f"{RESULT} is missing"
    return LaneVerdict(
        config=config,
        status_tool=StatusToolStatus.ERRORED,
        manifest_status=ManifestStatus.ERRORED,
        manifest_rule=ManifestRule.EXCEPTION_WITHOUT_REWARD,
        fingerprint=corrupt_result(problem),
        unread=tuple(notes.items) or (problem,),
    )


def _metrics_count(metrics: dict[str, Any] | None, key: str) -> int | None:
    value = metrics.get(key) if metrics else None
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
