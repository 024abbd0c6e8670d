"""Trial classification: CSB's status table, and infrastructure failures told apart from task outcomes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from csb_tree import FIXTURES, fixture_json

from bot.domain.classify import (
    classify_missing,
    classify_trial,
    infra_evidence,
    is_infra_failure,
    lost_with_host,
)
from bot.domain.outcome import EXIT_UNKNOWN, LaneStatus, TrialOutcome
from bot.domain.reason import ReasonKind

TRIAL_PASS = "result_trial_pass.json"


def _errored(exception_type: str, message: str, traceback: str = "") -> dict[str, Any]:
    return {
        "exception_info": {
            "exception_type": exception_type,
            "exception_message": message,
            "exception_traceback": traceback,
            "occurred_at": "2026-02-23T18:00:00",
        },
        "verifier_result": None,
    }


def _reward(value: Any) -> dict[str, Any]:
    return {"exception_info": None, "verifier_result": {"rewards": {"reward": value}}}


def test_every_trial_fixture_is_classified() -> None:
    """Job-level fixtures are not trials (see test_csb_results); every other result fixture is listed here."""
    trial_fixtures = sorted(p.name for p in FIXTURES.glob("result_*.json") if "job_level" not in p.name)
    assert trial_fixtures == [TRIAL_PASS]
    assert classify_trial(fixture_json(TRIAL_PASS)) == TrialOutcome(status=LaneStatus.PASSED, reward=0.9429)


@pytest.mark.parametrize(
    ("data", "status", "reward"),
    [
        (_reward(1.0), LaneStatus.PASSED, 1.0),
        (_reward(0.01), LaneStatus.PASSED, 0.01),
        (_reward(0), LaneStatus.FAILED, 0.0),
        (_reward(0.0), LaneStatus.FAILED, 0.0),
        (_reward(None), LaneStatus.FAILED, None),
        (_reward("0.9"), LaneStatus.PASSED, 0.9),  # CSB's tool casts with float()
        (_reward(True), LaneStatus.PASSED, 1.0),
        (_reward("n/a"), LaneStatus.FAILED, None),
        ({"verifier_result": {"rewards": {"reward": None, "score": 0.25}}}, LaneStatus.PASSED, 0.25),
        ({"exception_info": None, "verifier_result": None}, LaneStatus.FAILED, None),
        ({"exception_info": None}, LaneStatus.FAILED, None),
        ({"verifier_result": {"rewards": {"score": 0.5}}}, LaneStatus.PASSED, 0.5),
        ({"verifier_result": {"rewards": None}}, LaneStatus.FAILED, None),
    ],
)
def test_reward_decides_pass_or_fail(data: dict[str, Any], status: LaneStatus, reward: float | None) -> None:
    outcome = classify_trial(data)
    assert (outcome.status, outcome.reward, outcome.infra) == (status, reward, False)


@pytest.mark.parametrize(
    ("exception_type", "message", "traceback", "infra"),
    [
        ("AgentTimeoutError", "Agent execution timed out after 9000.0 seconds", "", False),
        ("NonZeroAgentExitCodeError", "Agent exited with code 1", "", False),
        ("VerifierTimeoutError", "Verifier timed out after 900 seconds", "", False),
        ("RewardFileNotFoundError", "No reward file found at /logs/verifier/reward.txt", "", False),
        ("ValueError", "something odd", 'File "harbor/trial.py", line 429, in run', False),
        ("KeyError", "'reward'", "", False),
        ("AgentSetupTimeoutError", "Agent setup timed out after 360 seconds", "", True),
        ("DaytonaError", "Failed to create sandbox", "", True),
        ("RuntimeError", "Sandbox not found: 4f2a", "", True),
        ("RuntimeError", "Docker compose command failed for environment ansible-abc", "", True),
        ("NonZeroAgentExitCodeError", "API Error: 429 {'type':'rate_limit_error'}", "", True),
        ("NonZeroAgentExitCodeError", "exit 1", "anthropic.RateLimitError: Rate limit reached", True),
        ("NonZeroAgentExitCodeError", "API Error: 529 Overloaded", "", True),
        ("RuntimeError", "OAuth token refresh failed: HTTP 403 Forbidden", "", True),
        ("RuntimeError", "HTTP 403 Forbidden", "", False),
    ],
)
def test_exceptions_are_errored_and_infra_only_when_they_say_so(
    exception_type: str, message: str, traceback: str, infra: bool
) -> None:
    outcome = classify_trial(_errored(exception_type, message, traceback))
    assert outcome.status is LaneStatus.ERRORED
    assert outcome.exception_type == exception_type
    assert outcome.reason == message
    assert outcome.infra is infra


def test_exception_wins_over_a_positive_reward() -> None:
    data = _errored("VerifierTimeoutError", "late") | {"verifier_result": {"rewards": {"reward": 1.0}}}
    assert classify_trial(data).status is LaneStatus.ERRORED


def test_exception_reason_is_the_first_line_shortened() -> None:
    outcome = classify_trial(_errored("RuntimeError", "\n  first line\nsecond line" + "x" * 500))
    assert outcome.reason == "first line"
    long = classify_trial(_errored("RuntimeError", "y" * 500))
    assert long.reason is not None and len(long.reason) == 200 and long.reason.endswith("…")


def test_exception_without_message_uses_its_type() -> None:
    assert classify_trial(_errored("AgentTimeoutError", "")).reason == "AgentTimeoutError"


def test_exception_info_as_plain_text() -> None:
    outcome = classify_trial({"exception_info": "429 Too Many Requests"})
    assert (outcome.status, outcome.exception_type, outcome.infra) == (LaneStatus.ERRORED, None, True)


@pytest.mark.parametrize(
    ("exception_type", "text", "infra"),
    [
        (None, "error: RATE LIMIT exceeded", True),
        (None, "rate_limit_error", True),
        (None, "status: 429", True),
        (None, '"status":429', True),
        (None, '  File "x.py", line 429, in f', False),
        (None, "agent.py:429: warning", False),
        (None, "took 14290 ms", False),
        (None, "Overloaded", True),
        (None, "daytona_sdk.DaytonaError: quota", True),
        (None, "docker compose up failed with exit 1", True),
        (None, "docker-compose: error pulling image", True),
        (None, "docker compose up", False),
        (None, "refreshing token ... got 403", True),
        (None, "403 on a GitHub clone", False),
        ("AgentSetupTimeoutError", "", True),
        ("AgentTimeoutError", "", False),
        ("AgentTimeoutError", "overloaded_error from the API", True),
        (None, "", False),
    ],
)
def test_is_infra_failure(exception_type: str | None, text: str, infra: bool) -> None:
    assert is_infra_failure(exception_type, text) is infra


def test_infra_evidence_quotes_the_matching_line() -> None:
    log = "starting trial\nAPI Error: 429 Too Many Requests\nbye"
    assert infra_evidence(None, log) == "API Error: 429 Too Many Requests"


HOUR = timedelta(hours=1)


@pytest.mark.parametrize(
    ("exit_code", "age", "status", "infra"),
    [
        (None, timedelta(minutes=59), LaneStatus.RUNNING, False),
        (None, HOUR, LaneStatus.TIMEOUT, False),
        (None, 5 * HOUR, LaneStatus.TIMEOUT, False),
        (0, timedelta(minutes=1), LaneStatus.ERRORED, True),
        (1, timedelta(minutes=1), LaneStatus.ERRORED, True),
        (-9, 5 * HOUR, LaneStatus.ERRORED, True),
    ],
)
def test_classify_missing(exit_code: int | None, age: timedelta, status: LaneStatus, infra: bool) -> None:
    outcome = classify_missing(exit_code=exit_code, age=age, timeout=HOUR)
    assert (outcome.status, outcome.infra) == (status, infra)


def test_missing_result_reasons() -> None:
    timeout = classify_missing(exit_code=None, age=timedelta(minutes=150), timeout=2 * HOUR)
    assert timeout.reason == "no trial result after 2h30m (limit 2h00m)"
    bare = classify_missing(exit_code=0, age=HOUR, timeout=HOUR)
    assert bare.reason == "harbor exited 0 without a trial result"
    killed = classify_missing(exit_code=-9, age=HOUR, timeout=HOUR)
    assert killed.reason == "harbor was killed by SIGKILL without a trial result"
    hung_up = classify_missing(exit_code=-1, age=HOUR, timeout=HOUR)
    assert hung_up.reason == "harbor was killed by SIGHUP without a trial result"
    unseen = classify_missing(exit_code=EXIT_UNKNOWN, age=HOUR, timeout=HOUR)  # adopted, or ended by Ray
    assert unseen.reason == "harbor ended (its exit code is unknown) without a trial result"


def test_an_executor_that_ended_the_lane_gives_the_reason_not_harbor() -> None:
    """Ray failed the job itself (no exit code; Harbor may never have run): its note in the log is the
    reason. The same note after a known exit code is only the log's last line."""
    log = "starting\nray: Ray failed job j before its lane ran (JOB_SUPERVISOR_ACTOR_START_FAILURE: x)\n"
    unseen = classify_missing(exit_code=EXIT_UNKNOWN, age=HOUR, timeout=2 * HOUR, log_tail=log)
    assert (unseen.status, unseen.infra) == (LaneStatus.ERRORED, True)
    assert unseen.reason == (
        "Ray failed job j before its lane ran (JOB_SUPERVISOR_ACTOR_START_FAILURE: x); no trial result"
    )
    exited = classify_missing(exit_code=1, age=HOUR, timeout=2 * HOUR, log_tail=log)
    assert (exited.reason, exited.log_line) == (
        "harbor exited 1 without a trial result",
        log.splitlines()[-1],
    )
    adopted = classify_missing(exit_code=EXIT_UNKNOWN, age=HOUR, timeout=2 * HOUR, log_tail="done\n")
    assert (adopted.reason, adopted.log_line) == (
        "harbor ended (its exit code is unknown) without a trial result",
        "done",
    )
    assert (unseen.reason_kind, exited.reason_kind) == (ReasonKind.EXECUTOR, ReasonKind.NO_RESULT)


def test_missing_result_reason_quotes_the_infra_log_line() -> None:
    log = "Building image\nError from daemon: docker compose up failed\nTraceback (most recent call last)\n"
    outcome = classify_missing(exit_code=1, age=HOUR, timeout=2 * HOUR, log_tail=log)
    assert (outcome.reason, outcome.log_line) == (
        "harbor exited 1 without a trial result",
        "Error from daemon: docker compose up failed",
    )


def test_missing_result_reason_falls_back_to_the_last_log_line() -> None:
    log = "Traceback (most recent call last)\nFileNotFoundError: benchmarks/tasks/x\n\n"
    outcome = classify_missing(exit_code=2, age=HOUR, timeout=2 * HOUR, log_tail=log)
    assert (outcome.reason, outcome.log_line) == (
        "harbor exited 2 without a trial result",
        "FileNotFoundError: benchmarks/tasks/x",
    )


@pytest.mark.parametrize(("reward", "status"), [(1.0, LaneStatus.PASSED), (0.0, LaneStatus.FAILED)])
def test_timed_out_but_scored_counts_as_scored(reward: float, status: LaneStatus) -> None:
    """CSB's classify_task: AgentTimeoutError with a reward is completed_pass/completed_fail, not errored."""
    data = {**_errored("AgentTimeoutError", "Agent execution timed out"), **_reward(reward)}
    data["exception_info"] = _errored("AgentTimeoutError", "x")["exception_info"]
    outcome = classify_trial(data)
    assert (outcome.status, outcome.reward, outcome.exception_type) == (status, reward, "AgentTimeoutError")


def test_timed_out_without_reward_and_other_exceptions_with_reward_are_errored() -> None:
    no_reward = _errored("AgentTimeoutError", "Agent execution timed out")
    other = {**_reward(1.0), "exception_info": _errored("VerifierTimeoutError", "x")["exception_info"]}
    assert classify_trial(no_reward).status is LaneStatus.ERRORED
    assert classify_trial(other).status is LaneStatus.ERRORED


def test_a_lane_lost_with_its_host_is_told_by_its_kind_not_its_words() -> None:
    timed_out = classify_missing(exit_code=None, age=2 * HOUR, timeout=HOUR)
    assert timed_out.reason_kind is ReasonKind.NO_RESULT_IN_TIME
    lost = lost_with_host(timed_out, "h2")
    assert (lost.status, lost.infra) == (LaneStatus.ERRORED, True)
    assert lost.reason == f"lost with its host h2: {timed_out.reason}"
    stopped = TrialOutcome(status=LaneStatus.TIMEOUT, reason=timed_out.reason)  # same words, no kind
    assert lost_with_host(stopped, "h2") is stopped
