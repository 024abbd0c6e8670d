"""A lane run as a Ray job through the wrapper's entrypoint, on a real head: its output lands in the
lane's log, its exit code is the job's `driver_exit_code`, and a stop gives it what a local lane gets:
one SIGINT, the grace period, then SIGKILL of its process group, the job STOPPED and no process left."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

from ray_cluster import RayHead, marked_pids
from ray_jobs_kit import ended
from waiting import until

from bot.executors.processes import process_alive
from bot.rayjobs.entrypoint import STOP_MARGIN_SEC, lane_entrypoint, stop_env
from bot.rayjobs.jobs_api import JobStatus, JobSubmission, RayJobsClient
from bot.rayjobs.lane_wrapper import SIGINT_NOT_BEFORE

# Longer than Ray's default wait from the stop signal to its SIGKILL (3 s): the lane living through it
# shows that Ray honours the job's RAY_JOB_STOP_WAIT_TIME_S.
GRACE = 4.0
# The lane: notes each SIGINT and keeps going (as Harbor tearing down does), starts a grandchild, and
# ticks until it is killed. It says it is ready once older than the age a SIGINT is trusted at.
LANE = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    notes = open(sys.argv[1], "a", buffering=1)
    signal.signal(signal.SIGINT, lambda *_: notes.write(f"sigint {time.time()}\\n"))
    subprocess.Popen(["sleep", "300"])
    print("lane started", flush=True)
    time.sleep(2.1)
    notes.write("ready\\n")
    while True:
        notes.write(f"tick {time.time()}\\n")
        time.sleep(0.05)
    """
)


def _submission(tmp_path: Path, argv: list[str], marker: str) -> JobSubmission:
    return JobSubmission(
        submission_id=f"csb-test-{marker[:12]}",
        entrypoint=lane_entrypoint(argv, tmp_path, tmp_path / "lane.log", GRACE),
        env_vars={"CSB_TEST_LANE": marker, **stop_env(GRACE)},
        resources={"csb_slot": 1},
    )


def test_stop_settings_make_ray_kill_after_the_wrapper() -> None:
    assert stop_env(30) == {
        "RAY_JOB_STOP_SIGNAL": "SIGINT",
        "RAY_JOB_STOP_WAIT_TIME_S": str(30 + STOP_MARGIN_SEC),
    }
    assert stop_env(0.5)["RAY_JOB_STOP_WAIT_TIME_S"] == str(1 + STOP_MARGIN_SEC)


async def test_the_lane_s_output_and_exit_code_come_through(ray_head: RayHead, tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    argv = ["sh", "-c", 'echo "lane output in $PWD"; exit 3']
    async with RayJobsClient(ray_head.dashboard_url) as ray:
        submission = _submission(tmp_path, argv, marker)
        await ray.submit(submission)
        job = await ended(ray, submission.submission_id)
    assert (job.status, job.driver_exit_code) == (JobStatus.FAILED, 3)
    assert (tmp_path / "lane.log").read_text() == f"lane output in {tmp_path}\n"


async def test_a_lane_that_cannot_start_exits_127_with_the_reason_in_its_log(
    ray_head: RayHead, tmp_path: Path
) -> None:
    async with RayJobsClient(ray_head.dashboard_url) as ray:
        submission = _submission(tmp_path, ["no-such-harbor", "run"], uuid.uuid4().hex)
        await ray.submit(submission)
        job = await ended(ray, submission.submission_id)
    assert job.driver_exit_code == 127
    assert "cannot start no-such-harbor" in (tmp_path / "lane.log").read_text()


async def test_a_stop_is_sigint_then_the_grace_period_then_sigkill(ray_head: RayHead, tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    notes = tmp_path / "notes"
    argv = [sys.executable, "-c", LANE, str(notes)]
    async with RayJobsClient(ray_head.dashboard_url) as ray:
        submission = _submission(tmp_path, argv, marker)
        await ray.submit(submission)
        await until(lambda: notes.exists() and "ready" in notes.read_text(), "the lane to be ready")
        assert len(marked_pids("CSB_TEST_LANE", marker)) >= 3  # wrapper, lane, grandchild
        assert await ray.stop(submission.submission_id) is True
        job = await ended(ray, submission.submission_id)
    assert job.status is JobStatus.STOPPED
    lines = notes.read_text().splitlines()
    sigints = [float(line.split()[1]) for line in lines if line.startswith("sigint")]
    ticks = [float(line.split()[1]) for line in lines if line.startswith("tick")]
    assert len(sigints) == 1, lines
    assert GRACE - 0.3 <= ticks[-1] - sigints[0] < GRACE + STOP_MARGIN_SEC, (sigints, ticks[-1])
    await until(lambda: not marked_pids("CSB_TEST_LANE", marker), "every process of the lane to be gone", 20)
    assert "lane started" in (tmp_path / "lane.log").read_text()


async def test_the_wrapper_runs_as_a_file_too_and_passes_a_signal_death_on(tmp_path: Path) -> None:
    """No head needed: the wrapper is a plain script; a lane killed by signal N exits 128+N."""
    wrapper = Path(__file__).resolve().parents[1] / "bot" / "rayjobs" / "lane_wrapper.py"
    argv = ["sh", "-c", "echo bye; kill -TERM $$"]
    command = [
        sys.executable,
        str(wrapper),
        "--cwd",
        str(tmp_path),
        "--log",
        "out.log",
        "--grace",
        "1",
        "--",
        *argv,
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert done.returncode == 128 + signal.SIGTERM
    assert (tmp_path / "out.log").read_text() == "bye\n"
    assert os.path.exists(wrapper)


async def test_a_wrapper_killed_alone_takes_its_lane_with_it(tmp_path: Path) -> None:
    """The wrapper SIGKILLed by itself, its lane (in its process group) signalled by no one, as when a
    stop's SIGINT never reached the wrapper and Ray's SIGKILL list missed the lane: the lane dies with it
    instead of running on, orphaned."""
    wrapper = Path(__file__).resolve().parents[1] / "bot" / "rayjobs" / "lane_wrapper.py"
    pid_file = tmp_path / "lane.pid"
    lane = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(300)"
    command = [sys.executable, str(wrapper), "--cwd", str(tmp_path), "--log", "out.log", "--grace", "30"]
    process = subprocess.Popen(
        [*command, "--", sys.executable, "-c", lane, str(pid_file)], cwd=tmp_path, start_new_session=True
    )
    try:
        await until(lambda: pid_file.exists() and pid_file.read_text(), "the lane to start")
        lane_pid = int(pid_file.read_text())
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
        await until(lambda: not process_alive(lane_pid), "the lane to die with its wrapper")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


async def test_a_stop_that_came_too_early_for_the_lane_is_sent_again_once_it_is_old_enough(
    tmp_path: Path,
) -> None:
    """No head needed. A SIGINT in a Python program's first instants can be lost: when the stop comes
    before the lane is SIGINT_NOT_BEFORE old, the wrapper sends the lane one SIGINT at that age, and the
    process group is SIGKILLed when the grace period is over."""
    notes = tmp_path / "notes"
    lane = "import signal,sys,time\n" + (
        "signal.signal(signal.SIGINT, lambda *_: open(sys.argv[1], 'a').write(f'sigint {time.time()}\\n'))\n"
        "open(sys.argv[1], 'a').write(f'started {time.time()}\\n')\n"
        "while True: time.sleep(0.05)\n"
    )
    wrapper = Path(__file__).resolve().parents[1] / "bot" / "rayjobs" / "lane_wrapper.py"
    command = [
        sys.executable,
        str(wrapper),
        "--cwd",
        str(tmp_path),
        "--log",
        str(tmp_path / "o.log"),
        "--grace",
        "3",
    ]
    process = subprocess.Popen(
        [*command, "--", sys.executable, "-c", lane, str(notes)], start_new_session=True
    )
    try:
        await until(lambda: notes.exists() and "started" in notes.read_text(), "the lane to start")
        os.kill(process.pid, signal.SIGINT)  # the wrapper alone: the lane's own SIGINT was "lost"
        await until(lambda: process.poll() is not None, "the wrapper to end")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    lines = notes.read_text().splitlines()
    sigints = [float(line.split()[1]) for line in lines if line.startswith("sigint")]
    started = float(lines[0].split()[1])
    assert len(sigints) == 1 and sigints[0] - started >= SIGINT_NOT_BEFORE - 0.5, lines
    assert process.returncode == -signal.SIGKILL
