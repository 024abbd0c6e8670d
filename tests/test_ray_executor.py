"""The Ray executor's pure rules: what of a lane's environment reaches Ray, which job ids it uses, and
which ended jobs Ray failed itself (an infrastructure failure, not the lane's)."""

from __future__ import annotations

from pathlib import Path

from bot.executors.ray import answer_unknown, failed_by_ray, ray_env, ray_failure, submission_prefix
from bot.rayjobs.jobs_api import JobInfo, JobStatus, RayJobNotFound, RayRefused, RayUnreachable


def test_a_lanes_env_reaches_ray_as_is_and_the_stop_is_sigint() -> None:
    """What to keep out is decided before (the lane's env is a ChildEnv); Ray gets it plus its stop."""
    env = {"HOME": "/home/lane", "BASELINE_MCP_TYPE": "none", "CSB_BOT_LANE": "7.abc"}
    sent = ray_env(env, grace_sec=30)
    assert {key: sent[key] for key in env} == env
    assert sent["RAY_JOB_STOP_SIGNAL"] == "SIGINT" and float(sent["RAY_JOB_STOP_WAIT_TIME_S"]) > 30


def test_job_ids_are_stable_per_checkout_and_differ_between_checkouts() -> None:
    assert submission_prefix(Path("/srv/csb")) == submission_prefix(Path("/srv/csb"))
    assert submission_prefix(Path("/srv/csb")) != submission_prefix(Path("/srv/csb-2"))


def _job(status: JobStatus, code: int | None, error_type: str | None = None) -> JobInfo:
    return JobInfo(submission_id="j", status=status, driver_exit_code=code, error_type=error_type)


def test_a_failed_job_without_an_exit_code_is_ray_s_failure_not_the_lane_s() -> None:
    assert failed_by_ray(_job(JobStatus.FAILED, None, "JOB_SUPERVISOR_ACTOR_START_TIMEOUT"))
    assert failed_by_ray(_job(JobStatus.FAILED, None, "RUNTIME_ENV_SETUP_FAILURE"))
    assert not failed_by_ray(_job(JobStatus.FAILED, 1, "JOB_ENTRYPOINT_COMMAND_ERROR"))
    assert not failed_by_ray(_job(JobStatus.STOPPED, None))
    assert not failed_by_ray(_job(JobStatus.SUCCEEDED, 0))


# Ray 2.60's messages for jobs it failed itself, as a real head wrote them (tracebacks shortened).
START_FAILURE = """Failed to start supervisor actor j: 'The resource should not include `bundle` which is \
reserved for Ray. resources: {'bundle': 1}'. Full traceback:
Traceback (most recent call last):
  File "ray/dashboard/modules/job/job_manager.py", line 598, in submit_job
ValueError: The resource should not include `bundle` which is reserved for Ray. resources: {'bundle': 1}
"""
SUPERVISOR_DIED = """Job supervisor actor died: The actor died unexpectedly before finishing this task.
\tclass_name: JobSupervisor
\tpid: 30533
The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"""


def test_ray_s_own_failure_is_told_in_one_line_and_says_whether_the_lane_had_run() -> None:
    before = JobInfo(
        submission_id="j",
        status=JobStatus.FAILED,
        error_type="JOB_SUPERVISOR_ACTOR_START_FAILURE",
        message=START_FAILURE,
    )
    assert ray_failure(before) == (
        "Ray failed job j before its lane ran (JOB_SUPERVISOR_ACTOR_START_FAILURE: Failed to start "
        "supervisor actor j: 'The resource should not include `bundle` which is reserved for Ray. "
        "resources: {'bundle': 1}'.)"
    )
    died = JobInfo(
        submission_id="j",
        status=JobStatus.FAILED,
        error_type="JOB_SUPERVISOR_ACTOR_DIED",
        message=SUPERVISOR_DIED,
    )
    assert ray_failure(died) == (
        "Ray failed job j while its lane ran (JOB_SUPERVISOR_ACTOR_DIED: Job supervisor actor died: "
        "The actor died unexpectedly before finishing this task.)"
    )
    assert ray_failure(JobInfo(submission_id="j", status=JobStatus.FAILED)) == (
        "Ray failed job j while its lane ran (FAILED: no message)"
    )


def test_a_submit_answered_with_a_server_error_or_not_at_all_may_have_been_taken() -> None:
    assert answer_unknown(RayUnreachable("no answer"))
    assert answer_unknown(RayRefused("No available agent to submit job, please try again later.", 500))
    assert answer_unknown(RayRefused("upstream request timeout", 504))
    assert not answer_unknown(RayRefused("TypeError: metadata values must be strings", 400))
    assert not answer_unknown(RayJobNotFound("no such job", 404))
    assert not answer_unknown(None)
