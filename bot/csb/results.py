"""Find and read the trial `result.json` Harbor writes for a lane, and turn it into a `TrialOutcome`.

Layout: `<jobs-dir>/<job timestamp>/<trial>/result.json`, where the trial folder is the task folder's name cut
to 32 characters plus `__<id>` (Harbor's rule). Next to the trial folders sits a job-level `result.json`
(counts, no verifier result), which is not a trial.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.csb.regular_file import open_regular
from bot.csb.trials import is_trial_folder, is_trial_of
from bot.csb.verdicts import judge_trial
from bot.domain.classify import classify_missing, classify_trial, infra_evidence
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.reason import ReasonKind

RESULT_FILE = "result.json"
LOG_TAIL_BYTES = 4096
# Harbor's trial result is a few kilobytes; anything past this cap is not one, and is never read whole.
RESULT_SIZE_LIMIT = 4 * MIB
CORRUPT = "result_json_corrupt"  # CSB's fingerprint id for an unreadable result (severity infra)


def find_trial_result(jobs_dir: Path, task_id: str) -> Path | None:
    """The newest trial result of `task_id` anywhere below `jobs_dir`, or None when there is none yet."""
    found = [path for path in _candidates(jobs_dir, task_id) if _belongs_to(path, task_id)]
    if not found:
        return None
    return max(found, key=_mtime)


def trial_in_job(job_dir: Path) -> Path | None:
    """The trial result inside one Harbor job folder (one task per job), or None when there is none yet."""
    try:
        names = sorted(entry.name for entry in os.scandir(job_dir) if entry.is_dir())
    except OSError:
        return None
    found = [job_dir / name / RESULT_FILE for name in names if is_trial_folder(name)]
    found = [path for path in found if path.is_file()]
    if len(found) <= 1:  # the usual one trial: no `stat` for its age
        return found[0] if found else None
    return max(found, key=_mtime)


def attempt_trial(jobs_dir: Path, job: str, task_id: str) -> Path | None:
    """One lane attempt's trial result: in the job folder it asked Harbor for (`--job-name job`), whatever
    Harbor named the trial (an MCP lane runs a task copy); else, for a lane started by a version without
    job names, found in the jobs dir by task id."""
    job_dir = jobs_dir / job
    if job_dir.is_dir():
        return trial_in_job(job_dir)
    return find_trial_result(jobs_dir, task_id)


def read_trial(path: Path) -> TrialOutcome:
    """Classify one trial result; an unreadable file is `errored` (infra, as CSB fingerprints it)."""
    return _classified(path, *_load(path))


def _classified(path: Path, data: dict[str, Any] | None, problem: str) -> TrialOutcome:
    """`read_trial` on the file already loaded (`_load`)."""
    if data is None:
        return TrialOutcome(
            status=LaneStatus.ERRORED,
            exception_type=CORRUPT,
            reason=f"{CORRUPT}: {path.name} {problem}",
            reason_kind=ReasonKind.UNREADABLE,
            infra=True,
        )
    return classify_trial(data)


def lane_outcome(
    jobs_dir: Path,
    task_id: str,
    *,
    exit_code: int | None,
    started_at: datetime,
    now: datetime,
    timeout: timedelta,
    log_path: Path | None,
    job_dir: Path | None = None,
    config: str | None = None,
) -> TrialOutcome:
    """The lane's status now, from its trial result, its process exit code and its log.

    `job_dir` is the job folder this attempt asked Harbor for (`--job-name`): its one trial is the
    lane's, whatever the task copy made Harbor call it. Without it the jobs dir is searched by task id.
    With the lane's `config`, a trial that ended also gets CSB's verdicts (`bot.csb.verdicts`).
    While Harbor still runs, an unreadable or unfinished result counts as not there yet: Harbor may be
    writing it at this moment, and calling that `errored` would end the lane early.
    """
    path = trial_in_job(job_dir) if job_dir is not None else find_trial_result(jobs_dir, task_id)
    # The result is read and parsed once, here, for its outcome and its verdicts alike.
    data, problem = _load(path) if path is not None else (None, "")
    if path is not None and (exit_code is not None or _is_finished(data)):
        outcome = _classified(path, data, problem)
        if config is not None:
            verdict = judge_trial(path.parent, config, result=data)
            outcome = outcome.model_copy(update={"verdict": verdict})
            decided = by_catalog(outcome)
            if decided is not None:
                return decided
        if outcome.status is LaneStatus.ERRORED and not outcome.infra:
            return _infra_from_log(outcome, log_path)
        return outcome
    tail = read_log_tail(log_path) if exit_code is not None else ""
    return classify_missing(exit_code=exit_code, age=now - started_at, timeout=timeout, log_tail=tail)


ZERO_TOKENS = "zero tokens: the account's token failed (the MANIFEST counts it errored)"


def by_catalog(outcome: TrialOutcome) -> TrialOutcome | None:
    """Whether a trial is retried, as CSB's error catalog says; None where it says nothing.

    An exception whose fingerprint the catalog marks auto-retry (`token_refresh_403`, `api_500`,
    `api_rate_limit`, `mcp_connection`, `deep_search_polling_only`) is retried; one it marks final
    (`timeout`, `context_window_exceeded`, `import_error`, ...) is final, and its reason says so. A
    zero-token trial (an account whose token failed) is retried. An error the catalog does not know
    (`unknown`, `result_json_corrupt`) is left to the bot's own rules (`bot.domain.classify`).
    """
    verdict = outcome.verdict
    if verdict is None:
        return None
    fingerprint = verdict.fingerprint
    if fingerprint is not None and fingerprint.auto_retry is not None:
        if outcome.status is not LaneStatus.ERRORED:
            return outcome  # scored (a timed-out agent's work): a result, never retried
        if fingerprint.auto_retry:
            reason = f"{fingerprint.id}: {outcome.reason}" if outcome.reason else fingerprint.id
            return outcome.model_copy(update={"infra": True, "reason": reason})
        reason = f"{outcome.reason} (final: CSB's error catalog does not retry {fingerprint.id})"
        return outcome.model_copy(update={"infra": False, "reason": reason})
    if fingerprint is None and verdict.zero_token:
        return outcome.model_copy(update={"infra": True, "reason": ZERO_TOKENS})
    return None


def trial_usage(path: Path) -> dict[str, int | float]:
    """Tokens and cost from the trial's `agent_result`, only the fields Harbor filled in."""
    data, _ = _load(path)
    agent = data.get("agent_result") if data else None
    if not isinstance(agent, dict):
        return {}
    fields = {
        "input_tokens": "n_input_tokens",
        "cache_tokens": "n_cache_tokens",
        "output_tokens": "n_output_tokens",
        "cost_usd": "cost_usd",
    }
    usage: dict[str, int | float] = {}
    for name, key in fields.items():
        value = agent.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            usage[name] = value
    return usage


def read_log_tail(log_path: Path | None, limit: int = LOG_TAIL_BYTES) -> str:
    """The last `limit` bytes of a lane log as text, starting at a whole line; "" when there is no log."""
    if log_path is None:
        return ""
    try:
        with open_regular(log_path) as handle:  # a FIFO or a device in its place is no log
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - limit))
            raw = handle.read()
    except OSError:
        return ""
    text = raw.decode("utf-8", errors="replace")
    if size > limit and "\n" in text:
        text = text.split("\n", 1)[1]
    return text


def _candidates(jobs_dir: Path, task_id: str) -> list[Path]:
    """result.json files in folders named for the task, without descending into trial folders."""
    found: list[Path] = []
    for root, dirs, _ in os.walk(jobs_dir):
        for name in list(dirs):
            if is_trial_of(name, task_id):
                result = Path(root, name, RESULT_FILE)
                if result.is_file():
                    found.append(result)
            if is_trial_folder(name):
                dirs.remove(name)
    return found


def _belongs_to(path: Path, task_id: str) -> bool:
    """Rules out job-level records and other tasks sharing the 32-character prefix, when the file says so."""
    data, _ = _load(path)
    if data is None:
        return True  # unreadable: maybe being written; the folder name is all we have
    if "n_total_trials" in data and "verifier_result" not in data:
        return False
    name = data.get("task_name")
    return not isinstance(name, str) or names_task(name, task_id)


def names_task(task_name: str, task_id: str) -> bool:
    """Whether a trial's `task_name` is this task: the folder's name (older Harbor), or `org/<task id>`
    (Harbor 0.25 names a trial after task.toml's `[task] name`, which it requires in that form)."""
    return task_name == task_id or task_name.partition("/")[2] == task_id


def _is_finished(data: dict[str, Any] | None) -> bool:
    """Whether a loaded trial result says the trial ended (an unreadable one may be being written)."""
    return data is not None and data.get("finished_at", True) is not None


def _infra_from_log(outcome: TrialOutcome, log_path: Path | None) -> TrialOutcome:
    """A task-looking exception is still infra when Harbor's log shows a rate limit or sandbox failure."""
    evidence = infra_evidence(None, read_log_tail(log_path))
    if evidence is None:
        return outcome
    return outcome.model_copy(update={"infra": True, "log_line": evidence})


def _load(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The file as a JSON object, or None and why not, in words that finish "result.json …"."""
    try:
        data = read_json(path, RESULT_SIZE_LIMIT)
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    except UnreadableJson as exc:
        return None, str(exc)
    if not isinstance(data, dict):
        return None, "is not a JSON object"
    return data, ""


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
