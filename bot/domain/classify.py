"""Classify a Harbor trial like CSB's status tool, and tell infrastructure failures from task outcomes.

Pure: callers read the files (see `bot.csb.results`) and pass the parsed data or text in.

Infra precedence, decided once here:
1. An exception type that is infrastructure by itself (`AgentSetupTimeoutError`, `DaytonaError`, …) is infra.
2. Otherwise any infra pattern (rate limit, Daytona sandbox, docker compose, token refresh 403) found in the
   exception type, message, traceback or log text makes it infra, whatever the exception type: a
   `NonZeroAgentExitCodeError` whose agent died of a 429 is the API's fault, not the task's.
3. Everything else is a task outcome (`AgentTimeoutError`, `NonZeroAgentExitCodeError`,
   `VerifierTimeoutError`, `RewardFileNotFoundError`, any other exception, and `failed`), never retried.
"""

from __future__ import annotations

import math
import re
import signal
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from bot.domain.mrkdwn import clip
from bot.domain.outcome import EXIT_UNKNOWN, LaneStatus, TrialOutcome
from bot.domain.reason import ReasonKind

# The one exception CSB's status tool does not count as an error when the trial still has a reward.
TIMED_OUT_BUT_SCORED = "AgentTimeoutError"
_INFRA_TYPES = frozenset({"AgentSetupTimeoutError", "DaytonaError"})

# Each pattern is applied line by line (re.M), so "token refresh … 403" must sit on one line.
_INFRA_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"rate[ _-]?limit", re.I),
    # 429 as a status code, not a line number in a traceback ("line 429", "foo.py:429").
    re.compile(r"(?<![\d.])(?<!line )(?<!\.py:)429(?!\d)", re.I),
    re.compile(r"overloaded", re.I),
    re.compile(r"sandbox not found", re.I),
    re.compile(r"daytona\w*error", re.I),
    re.compile(r"AgentSetupTimeoutError"),
    re.compile(r"^(?=.*docker[ -]?compose)(?=.*(?:fail|error)).*$", re.I | re.M),
    re.compile(r"^(?=.*refresh)(?=.*token)(?=.*(?:(?<!\d)403(?!\d)|forbidden)).*$", re.I | re.M),
)

_REASON_LIMIT = 200

# How an executor that ended a lane itself says why, as the last line of the lane's log ("ray: Ray failed
# job … before its lane ran (…)"). Such a lane has no exit code, and Harbor may never have run.
EXECUTOR_NOTE = "ray: "


def infra_evidence(exception_type: str | None, text: str) -> str | None:
    """The line that marks a failure as infrastructure, or None for a task outcome.

    Returned rather than a bare bool so the reason shown on the status card can quote it.
    """
    if exception_type in _INFRA_TYPES:
        return exception_type
    for line in f"{exception_type or ''}\n{text}".splitlines():
        if any(pattern.search(line) for pattern in _INFRA_PATTERNS):
            return _shorten(line)
    return None


def is_infra_failure(exception_type: str | None, text: str) -> bool:
    """True when a retry may succeed: see the module docstring for the precedence."""
    return infra_evidence(exception_type, text) is not None


def classify_trial(data: Mapping[str, Any]) -> TrialOutcome:
    """Status of one trial `result.json`, branch for branch as CSB's status tool (`classify_task`).

    An agent that ran out of time but whose work was still scored (`AgentTimeoutError` with a reward)
    counts as a scored pass or fail there, so it does here: the pair stays in the statistics.
    """
    exception_info = data.get("exception_info")
    reward = trial_reward(data)
    if exception_info is not None:
        exception_type, _, _ = _exception_parts(exception_info)
        if exception_type != TIMED_OUT_BUT_SCORED or reward is None:
            return _errored(exception_info)
        return TrialOutcome(
            status=LaneStatus.PASSED if reward > 0 else LaneStatus.FAILED,
            reward=reward,
            exception_type=exception_type,
            reason="the agent timed out; its work was scored",
        )
    if reward is not None and reward > 0:
        return TrialOutcome(status=LaneStatus.PASSED, reward=reward)
    return TrialOutcome(status=LaneStatus.FAILED, reward=reward)


def trial_reward(data: Mapping[str, Any]) -> float | None:
    """`verifier_result.rewards.reward`, else `.score`, cast to float as CSB's tool casts it.

    A value `float()` cannot take (a list, a word) is None here, where CSB's tool would stop with an error.
    """
    verifier = data.get("verifier_result") or {}
    rewards = verifier.get("rewards") if isinstance(verifier, Mapping) else None
    if not isinstance(rewards, Mapping):
        return None
    value: Any = rewards.get("reward")  # any JSON value: float() below says whether it is a number
    if value is None:
        value = rewards.get("score")
    try:
        reward = float(value)  # as CSB's tool casts: `True` is 1.0, "0.9" is 0.9
    except (TypeError, ValueError, OverflowError):
        return None
    return reward if math.isfinite(reward) else None  # `inf` or `nan` must never reach the statistics


# How a lane with no process in sight and no result past its time limit is told (see `lost_with_host`).
NO_RESULT_IN_TIME = "no trial result after"


def lost_with_host(outcome: TrialOutcome, host: str) -> TrialOutcome:
    """A lane started on another host that left no result within its time limit: that host (or the bot
    process there) is taken for dead, and the lane for lost with it: an infrastructure failure, so it is
    retried, not counted as the task's timeout."""
    if outcome.status is not LaneStatus.TIMEOUT or outcome.reason_kind is not ReasonKind.NO_RESULT_IN_TIME:
        return outcome
    reason = f"lost with its host {host}: {outcome.reason}"
    return TrialOutcome(status=LaneStatus.ERRORED, reason=reason, reason_kind=outcome.reason_kind, infra=True)


def classify_missing(
    *, exit_code: int | None, age: timedelta, timeout: timedelta, log_tail: str = ""
) -> TrialOutcome:
    """A lane with no trial result yet: still running, timed out, or Harbor died before writing one.

    Harbor exiting without a trial result is always infrastructure (the task never got its chance).
    """
    if exit_code is None:
        if age < timeout:
            return TrialOutcome(status=LaneStatus.RUNNING)
        reason = f"{NO_RESULT_IN_TIME} {_duration(age)} (limit {_duration(timeout)})"
        return TrialOutcome(
            status=LaneStatus.TIMEOUT, reason=reason, reason_kind=ReasonKind.NO_RESULT_IN_TIME
        )
    note = _executor_note(log_tail) if exit_code == EXIT_UNKNOWN else None
    if note is not None:  # what the executor saw is the cause; "harbor ended" might not even be true
        return TrialOutcome(
            status=LaneStatus.ERRORED,
            reason=f"{note}; no trial result",
            reason_kind=ReasonKind.EXECUTOR,
            infra=True,
        )
    return TrialOutcome(
        status=LaneStatus.ERRORED,
        reason=f"{_how_harbor_ended(exit_code)} without a trial result",
        reason_kind=ReasonKind.NO_RESULT,
        log_line=infra_evidence(None, log_tail) or _last_line(log_tail),
        infra=True,
    )


def _executor_note(log_tail: str) -> str | None:
    """The executor's own word on a lane it ended, when it is the log's last line."""
    last = _last_line(log_tail)
    return last.removeprefix(EXECUTOR_NOTE) if last and last.startswith(EXECUTOR_NOTE) else None


def _how_harbor_ended(exit_code: int) -> str:
    """An exit code in words: a negative one is the signal that killed the process (Python's convention)."""
    if exit_code == EXIT_UNKNOWN:
        return "harbor ended (its exit code is unknown)"
    if exit_code < 0:
        try:
            return f"harbor was killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"harbor was killed by signal {-exit_code}"
    return f"harbor exited {exit_code}"


def _errored(exception_info: Any) -> TrialOutcome:
    exception_type, message, traceback = _exception_parts(exception_info)
    evidence = infra_evidence(exception_type, f"{message}\n{traceback}")
    reason = _shorten(_first_line(message)) or exception_type or "trial raised an exception"
    return TrialOutcome(
        status=LaneStatus.ERRORED,
        exception_type=exception_type,
        reason=reason,
        reason_kind=ReasonKind.EXCEPTION,
        infra=evidence is not None,
    )


def _exception_parts(exception_info: Any) -> tuple[str | None, str, str]:
    """Harbor writes `exception_type/_message/_traceback`; CSB's tool also reads `type/message/traceback`."""
    if not isinstance(exception_info, Mapping):
        return None, str(exception_info), ""
    exception_type = exception_info.get("exception_type", exception_info.get("type"))
    message = exception_info.get("exception_message", exception_info.get("message"))
    traceback = exception_info.get("exception_traceback", exception_info.get("traceback"))
    return (
        str(exception_type) if exception_type else None,
        str(message) if message is not None else "",
        str(traceback) if traceback is not None else "",
    )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _last_line(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return _shorten(lines[-1]) if lines else None


def _shorten(text: str) -> str:
    text = text.strip()
    return clip(text, _REASON_LIMIT)


def _duration(delta: timedelta) -> str:
    minutes = int(delta.total_seconds()) // 60
    return f"{minutes // 60}h{minutes % 60:02d}m"
