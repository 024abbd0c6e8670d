"""Finding and reading a lane's trial result in Harbor's jobs folder, laid out as Harbor writes it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from csb_tree import FIXTURES, fixture_json, put, write_json

from bot.csb import find_trial_result, lane_outcome, read_log_tail, read_trial, trial_usage
from bot.domain.classify import classify_trial
from bot.domain.outcome import LaneStatus
from bot.domain.reason import ReasonKind

TASK = "ansible-abc-imports-fix-001"  # the task of result_trial_pass.json
JOB = "2026-02-23__17-58-13"
STARTED = datetime(2026, 2, 23, 17, 58, tzinfo=UTC)
TIMEOUT = timedelta(hours=2)
JOB_LEVEL = sorted(p.name for p in FIXTURES.glob("result_job_level_*.json"))


def _trial(jobs: Path, folder: str, data: dict[str, Any] | None = None, job: str = JOB) -> Path:
    if data is None:
        return put(jobs, f"{job}/{folder}/result.json", "result_trial_pass.json")
    return write_json(jobs, f"{job}/{folder}/result.json", data)


def _errored(exception_type: str, message: str) -> dict[str, Any]:
    info = {"exception_type": exception_type, "exception_message": message, "exception_traceback": ""}
    return {"task_name": TASK, "exception_info": info, "finished_at": "2026-02-23T18:21:21"}


def _outcome(
    jobs: Path, *, exit_code: int | None, age: timedelta = timedelta(minutes=5), log: Path | None = None
):
    return lane_outcome(
        jobs, TASK, exit_code=exit_code, started_at=STARTED, now=STARTED + age, timeout=TIMEOUT, log_path=log
    )


def test_job_level_fixtures_really_are_job_level() -> None:
    assert len(JOB_LEVEL) == 2
    for name in JOB_LEVEL:
        data = fixture_json(name)
        assert "n_total_trials" in data and "verifier_result" not in data


@pytest.mark.parametrize("job_level", JOB_LEVEL)
def test_finds_the_trial_and_ignores_the_job_level_result(tmp_path: Path, job_level: str) -> None:
    put(tmp_path, f"{JOB}/result.json", job_level)
    assert find_trial_result(tmp_path, TASK) is None
    trial = _trial(tmp_path, f"{TASK}__D9CcXfP")
    assert find_trial_result(tmp_path, TASK) == trial


@pytest.mark.parametrize("job_level", JOB_LEVEL)
def test_a_job_level_record_in_a_trial_shaped_folder_is_still_not_a_trial(
    tmp_path: Path, job_level: str
) -> None:
    put(tmp_path, f"{JOB}/{TASK}__AAAAAAA/result.json", job_level)
    assert find_trial_result(tmp_path, TASK) is None


def test_no_jobs_folder_yet(tmp_path: Path) -> None:
    assert find_trial_result(tmp_path / "missing", TASK) is None


def test_other_tasks_and_deep_layouts(tmp_path: Path) -> None:
    _trial(tmp_path, "other-task-001__AAAAAAA", {"task_name": "other-task-001"})
    deep = _trial(tmp_path, f"{TASK}__BBBBBBB", job=f"ccb_fix_{TASK}_baseline-local-direct/{JOB}")
    assert find_trial_result(tmp_path, TASK) == deep
    assert find_trial_result(tmp_path, "other-task-00") is None


def test_newest_trial_wins(tmp_path: Path) -> None:
    old = _trial(tmp_path, f"{TASK}__OLDOLD1")
    new = _trial(tmp_path, f"{TASK}__NEWNEW1", job="2026-02-24__09-00-00")
    os.utime(old, (2_000_000_000, 2_000_000_000))
    os.utime(new, (1_000_000_000, 1_000_000_000))
    assert find_trial_result(tmp_path, TASK) == old


def test_harbor_cuts_trial_folder_names_at_32_characters(tmp_path: Path) -> None:
    first, second = "protonmail-conv-testhooks-fix-001", "protonmail-conv-testhooks-fix-002"
    assert len(first) == 33
    a = _trial(tmp_path, "protonmail-conv-testhooks-fix-00__qVtzw6L", {"task_name": first})
    b = _trial(tmp_path, "protonmail-conv-testhooks-fix-00__XyZ1234", {"task_name": second})
    assert find_trial_result(tmp_path, first) == a
    assert find_trial_result(tmp_path, second) == b


def test_harbor_0_25_names_the_task_org_slash_name_and_it_still_matches_the_id(tmp_path: Path) -> None:
    """Harbor 0.25 takes `[task] name = "org/name"` from task.toml as the trial's task name."""
    first, second = "protonmail-conv-testhooks-fix-001", "protonmail-conv-testhooks-fix-002"
    a = _trial(tmp_path, "protonmail-conv-testhooks-fix-00__qVtzw6L", {"task_name": f"csb/{first}"})
    b = _trial(tmp_path, "protonmail-conv-testhooks-fix-00__XyZ1234", {"task_name": f"csb/{second}"})
    assert find_trial_result(tmp_path, first) == a
    assert find_trial_result(tmp_path, second) == b
    _trial(tmp_path, "other-task-001__AAAAAAA", {"task_name": "csb/other-task-001"})
    assert find_trial_result(tmp_path, "other-task-001") is not None
    assert find_trial_result(tmp_path, "csb") is None


def test_newer_harbor_strips_separators_after_the_cut(tmp_path: Path) -> None:
    task_id = "a-task-name-cut-right-after-das-_-long"
    assert task_id[:32].endswith("-")
    trial = _trial(tmp_path, f"{task_id[:32].rstrip('_-')}__AbC1234", {"task_name": task_id})
    assert find_trial_result(tmp_path, task_id) == trial


def test_read_trial_pass_fixture() -> None:
    outcome = read_trial(FIXTURES / "result_trial_pass.json")
    assert (outcome.status, outcome.reward) == (LaneStatus.PASSED, 0.9429)


@pytest.mark.parametrize("text", ['{"exception_info": nu', "[]", ""])
def test_unreadable_result_is_errored(tmp_path: Path, text: str) -> None:
    path = tmp_path / "result.json"
    path.write_text(text)
    outcome = read_trial(path)
    assert outcome.status is LaneStatus.ERRORED and outcome.infra
    assert outcome.reason is not None and outcome.reason.startswith("result_json_corrupt: result.json ")


def test_lane_outcome_reads_the_trial(tmp_path: Path) -> None:
    _trial(tmp_path, f"{TASK}__D9CcXfP")
    put(tmp_path, f"{JOB}/result.json", JOB_LEVEL[0])
    assert _outcome(tmp_path, exit_code=None).status is LaneStatus.PASSED
    assert _outcome(tmp_path, exit_code=0).reward == 0.9429


def test_lane_outcome_without_result(tmp_path: Path) -> None:
    assert _outcome(tmp_path, exit_code=None).status is LaneStatus.RUNNING
    assert _outcome(tmp_path, exit_code=None, age=TIMEOUT).status is LaneStatus.TIMEOUT
    log = tmp_path / "lane.log"
    log.write_text("pulling\nError: 429 Too Many Requests\nexit\n")
    crashed = _outcome(tmp_path, exit_code=1, log=log)
    assert (crashed.status, crashed.infra) == (LaneStatus.ERRORED, True)
    assert (crashed.reason, crashed.reason_kind, crashed.log_line) == (
        "harbor exited 1 without a trial result",
        ReasonKind.NO_RESULT,
        "Error: 429 Too Many Requests",
    )


def test_a_result_being_written_is_not_final_while_harbor_runs(tmp_path: Path) -> None:
    path = _trial(tmp_path, f"{TASK}__D9CcXfP")
    path.write_text('{"task_name": "ansible-abc-imports-fix-001", "exception_in')
    assert _outcome(tmp_path, exit_code=None).status is LaneStatus.RUNNING
    assert _outcome(tmp_path, exit_code=None, age=TIMEOUT).status is LaneStatus.TIMEOUT
    assert _outcome(tmp_path, exit_code=0).status is LaneStatus.ERRORED


def test_an_unfinished_result_is_not_final_while_harbor_runs(tmp_path: Path) -> None:
    data = fixture_json("result_trial_pass.json") | {"finished_at": None, "verifier_result": None}
    _trial(tmp_path, f"{TASK}__D9CcXfP", data)
    assert _outcome(tmp_path, exit_code=None).status is LaneStatus.RUNNING
    assert _outcome(tmp_path, exit_code=0).status is LaneStatus.FAILED


def test_a_task_exception_becomes_infra_when_the_log_shows_it(tmp_path: Path) -> None:
    _trial(tmp_path, f"{TASK}__D9CcXfP", _errored("NonZeroAgentExitCodeError", "Agent exited with code 1"))
    log = tmp_path / "lane.log"
    log.write_text("step 1\n")
    plain = _outcome(tmp_path, exit_code=0, log=log)
    assert (plain.status, plain.infra, plain.exception_type) == (
        LaneStatus.ERRORED,
        False,
        "NonZeroAgentExitCodeError",
    )
    log.write_text('step 1\nAPI Error: 529 {"type":"overloaded_error"}\n')
    infra = _outcome(tmp_path, exit_code=0, log=log)
    assert infra.infra
    assert (infra.reason, infra.reason_kind) == ("Agent exited with code 1", ReasonKind.EXCEPTION)
    assert infra.log_line == 'API Error: 529 {"type":"overloaded_error"}'


def test_failed_is_never_infra_whatever_the_log_says(tmp_path: Path) -> None:
    _trial(tmp_path, f"{TASK}__D9CcXfP", {"task_name": TASK, "verifier_result": {"rewards": {"reward": 0.0}}})
    log = tmp_path / "lane.log"
    log.write_text("rate limit hit once, retried\n")
    outcome = _outcome(tmp_path, exit_code=0, log=log)
    assert (outcome.status, outcome.infra) == (LaneStatus.FAILED, False)


def test_trial_usage(tmp_path: Path) -> None:
    assert trial_usage(FIXTURES / "result_trial_pass.json") == {
        "input_tokens": 8763061,
        "cache_tokens": 8762396,
        "output_tokens": 496,
    }
    priced = write_json(tmp_path, "a.json", {"agent_result": {"n_output_tokens": 3, "cost_usd": 0.25}})
    assert trial_usage(priced) == {"output_tokens": 3, "cost_usd": 0.25}
    broken = tmp_path / "b.json"
    broken.write_text("{")
    assert trial_usage(broken) == {}
    assert trial_usage(tmp_path / "missing.json") == {}


def test_read_log_tail(tmp_path: Path) -> None:
    assert read_log_tail(None) == ""
    assert read_log_tail(tmp_path / "missing.log") == ""
    log = tmp_path / "lane.log"
    lines = [json.dumps({"line": n}) for n in range(1000)]
    log.write_text("\n".join(lines) + "\n")
    tail = read_log_tail(log)
    assert len(tail.encode()) <= 4096
    assert tail.splitlines()[0] in lines and tail.splitlines()[-1] == lines[-1]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "is nested too deeply to read"),
        ('{"pad": "' + "x" * (4 * 1024 * 1024) + '"}', "is larger than 4 MiB"),
        ('{"verifier_result": {"rewards": {"reward": Infinity}}}', "non-finite number Infinity"),
        ('{"verifier_result": {"rewards": {"reward": NaN}}}', "non-finite number NaN"),
        ('{"verifier_result": {"rewards": {"reward": 1e999}}}', "number 1e999, which is out of range"),
    ],
)
def test_a_corrupt_result_is_errored_with_csbs_fingerprint(tmp_path: Path, text: str, why: str) -> None:
    jobs = tmp_path / "jobs"
    path = jobs / JOB / f"{TASK}__D9CcXfP" / "result.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    outcome = _outcome(jobs, exit_code=0)
    assert (outcome.status, outcome.infra, outcome.reward) == (LaneStatus.ERRORED, True, None)
    assert outcome.exception_type == "result_json_corrupt"
    assert outcome.reason is not None and outcome.reason.startswith("result_json_corrupt: result.json ")
    assert why in outcome.reason
    assert trial_usage(path) == {}


@pytest.mark.parametrize("reward", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_reward_never_leaves_classification(reward: float) -> None:
    outcome = classify_trial({"verifier_result": {"rewards": {"reward": reward}}})
    assert outcome.reward is None
