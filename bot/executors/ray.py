"""The Ray executor: each lane attempt is one job on an existing Ray cluster, through its Jobs REST API.

A job's `submission_id` is the attempt's `job_name(run, lane, attempt)` behind a prefix of this
checkout (several bots, or test runs, may share a cluster), so it is unique per attempt and the same
after a restart: a submit whose answer was lost is sent again and Ray's "already exists" is taken for
"submitted"; a restarted bot finds its jobs again by id, in one listing, and submits nothing twice.
The job's entrypoint (`bot.rayjobs.entrypoint`) runs the lane's command in the checkout with its
output appended to the lane's log under `runs/`, the same paths on every worker (shared storage), and
turns Ray's stop into SIGINT, the grace period, then SIGKILL. The lane's environment goes in the job's
`runtime_env.env_vars`, which Ray shows in every listing: it is the lane's allow-listed `ChildEnv`
(`bot.csb.child_env`), so no Slack secret, database URL or Ray token is among it.

Watching is one `GET /api/jobs/` per tick for all lanes. What Ray itself got wrong is an
infrastructure failure, retried like any other, and said so in the lane's log (whose last line the
report quotes): a job still PENDING after `pending_sec`, one Ray failed itself (FAILED without an
exit code: its supervisor did not start or died, its runtime_env failed; Ray's message, a traceback,
cut to its first line), and one the head no longer knows (it restarted: the lane is lost). While the
head does not answer, lanes are shown as running elsewhere (judged by their files, lost only when their
time limit passed) and `unavailable` pauses starting new ones.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from bot.csb.child_env import spawn_env
from bot.csb.harbor_run import job_name
from bot.domain.classify import EXECUTOR_NOTE
from bot.domain.clock import Clock
from bot.domain.errors import InfraError
from bot.domain.outcome import EXIT_UNKNOWN
from bot.executors.base import (
    RUNNING,
    UNSEEN,
    Adopted,
    ExecutorContext,
    LaneLaunch,
    LaneRef,
    Seen,
    ended,
)
from bot.executors.ray_settings import RaySettings
from bot.rayjobs.entrypoint import lane_entrypoint, stop_env
from bot.rayjobs.jobs_api import (
    JobInfo,
    JobStatus,
    JobSubmission,
    RayJobNotFound,
    RayJobsClient,
    RayJobsError,
    RayRefused,
    RayUnreachable,
)

log = logging.getLogger(__name__)

POLL_SEC = 0.2  # how often `wait_any` and `wait_all` list the jobs: Ray tells nobody when one ends
FRESH_SEC = 1.0  # a contact with the head this recent answers `unavailable` without asking again
# Ray 2.60's error types for a job whose entrypoint never started; any other (JOB_SUPERVISOR_ACTOR_DIED,
# e.g. the supervisor killed for memory) may have come with the lane running, which Ray then kills.
_BEFORE_THE_LANE = frozenset(
    {
        "JOB_SUPERVISOR_ACTOR_START_FAILURE",
        "JOB_SUPERVISOR_ACTOR_START_TIMEOUT",
        "JOB_SUPERVISOR_ACTOR_UNSCHEDULABLE",
        "RUNTIME_ENV_SETUP_FAILURE",
        "JOB_ENTRYPOINT_COMMAND_START_ERROR",
    }
)
_TRACEBACK_TAIL = "Full traceback:"
_REASON_CHARS = 400


def submission_prefix(repo: Path) -> str:
    """The prefix of this bot's job ids: its checkout's path, hashed (one checkout, one bot)."""
    return "csb-" + hashlib.sha256(str(repo).encode()).hexdigest()[:8] + "-"


def ray_env(env: Mapping[str, str], grace_sec: float) -> dict[str, str]:
    """The lane's environment (already allow-listed) as its job's env_vars, with Ray's stop as SIGINT."""
    return {**env, **stop_env(grace_sec)}


def answer_unknown(answer: object) -> bool:
    """A submit whose fate the answer does not tell: none came, or a server error (Ray's own 500s say
    "try again later"; a proxy's 502 or 504 may come after the head took the job)."""
    return isinstance(answer, RayUnreachable) or (isinstance(answer, RayRefused) and answer.status >= 500)


def failed_by_ray(job: JobInfo) -> bool:
    """Ray failed the job itself (its supervisor or runtime_env), not the lane: no exit code came back."""
    return job.status is JobStatus.FAILED and job.driver_exit_code is None


def ray_failure(job: JobInfo) -> str:
    """Why Ray failed a job itself, in one line for the lane's log and the report. Ray's message is a
    traceback behind one line that says it ("Failed to start supervisor actor <id>: '<why>'. Full
    traceback:", "Job supervisor actor died: ..."): that line is kept, the rest is in Ray's own logs."""
    when = "before its lane ran" if job.error_type in _BEFORE_THE_LANE else "while its lane ran"
    lines = [line.strip() for line in (job.message or "").splitlines() if line.strip()]
    first = lines[0].removesuffix(_TRACEBACK_TAIL).strip() if lines else "no message"
    why = f"{job.error_type or 'FAILED'}: {first}"
    return f"Ray failed job {job.submission_id} {when} ({why})"[:_REASON_CHARS]


class RayExecutor:
    def __init__(
        self,
        client: RayJobsClient,
        repo: Path,
        clock: Clock,
        *,
        grace_sec: float,
        lane_resource: str | None = None,
        pending_sec: float = 300,
    ) -> None:
        self._ray = client
        self._repo = repo
        self._clock = clock
        self._grace = grace_sec
        self._resource = lane_resource
        self._pending = timedelta(seconds=pending_sec)
        self._prefix = submission_prefix(repo)
        self._jobs: dict[int, str] = {}  # lane id → submission id, started or adopted here
        self._ended: dict[int, int] = {}  # lane id → exit code, once its end was seen
        self._logs: dict[int, Path] = {}  # lane id → its log file, where Ray's own failures are told
        self._unsent: dict[int, JobSubmission] = {}  # submits whose answer was lost: sent again
        # Jobs to stop once the head runs them: a stop the head could not take (it was away), and a
        # job stopped while PENDING (Ray 2.60 takes that stop and leaves the job PENDING).
        self._owed_stops: set[str] = set()
        self._contact: tuple[float, str | None] = (float("-inf"), None)  # when, and why it failed
        # Ray tells nobody when a job ends: lanes are seen ending at the ticks, and this is never called.
        self.on_exit: Callable[[], None] | None = None

    @classmethod
    def for_cluster(cls, settings: RaySettings, context: ExecutorContext) -> RayExecutor:
        """The executor for the chosen head (the settings refuse `ray` without an address)."""
        if settings.address is None:
            raise InfraError("the Ray executor needs the head's address (CSB_RAY_ADDRESS)")
        return cls(
            RayJobsClient(settings.address, settings.token),
            context.repo,
            context.clock,
            grace_sec=context.grace_sec,
            lane_resource=settings.lane_resource,
            pending_sec=settings.pending_sec,
        )

    def submission_id(self, job: str) -> str:
        return self._prefix + job

    async def unavailable(self) -> str | None:
        """Why lanes cannot start: the head did not answer (asked again only after `FRESH_SEC`)."""
        at, failure = self._contact
        if time.monotonic() - at < FRESH_SEC:
            return failure
        try:
            await self._ray.version()
        except RayJobsError as exc:
            return self._failed(exc)
        self._reached()
        return None

    def _reached(self) -> None:
        self._contact = (time.monotonic(), None)

    def _failed(self, exc: RayJobsError) -> str:
        self._contact = (time.monotonic(), str(exc))
        return str(exc)

    async def start(self, launches: Sequence[LaneLaunch]) -> list[int | InfraError | None]:
        """Submit one job per lane, all at once. A job Ray refused (4xx: the request itself) is an
        InfraError; one whose answer was lost or a server error (5xx: Ray's own, or a proxy's that may
        have passed the submit on) counts as submitted, and is sent again once with the next listing
        that lacks it: a new attempt would run the lane twice if the job existed after all."""
        submissions = [self._submission(launch) for launch in launches]
        await asyncio.to_thread(_make_log_folders, launches)
        answers = await asyncio.gather(
            *(self._ray.submit(submission) for submission in submissions), return_exceptions=True
        )
        results: list[int | InfraError | None] = []
        for launch, submission, answer in zip(launches, submissions, answers, strict=True):
            if answer_unknown(answer):
                log.warning("lane %s: submit unanswered, sent again later: %s", launch.lane_id, answer)
                self._unsent[launch.lane_id] = submission
            elif isinstance(answer, RayJobsError):
                results.append(answer)
                continue
            elif isinstance(answer, BaseException):
                raise answer
            self._jobs[launch.lane_id] = submission.submission_id
            self._logs[launch.lane_id] = launch.log_path
            results.append(None)
        return results

    def _submission(self, launch: LaneLaunch) -> JobSubmission:
        if not launch.job:
            raise ValueError(f"lane {launch.lane_id}: a Ray job needs the attempt's job name")
        return JobSubmission(
            submission_id=self.submission_id(launch.job),
            entrypoint=lane_entrypoint(launch.argv, launch.cwd, launch.log_path, self._grace),
            env_vars=ray_env(spawn_env(launch.env), self._grace),
            resources={self._resource: 1} if self._resource else None,
            metadata={"csb_lane": str(launch.lane_id), "csb_job": launch.job},
        )

    async def observe(self, lanes: Collection[LaneRef]) -> dict[int, Seen]:
        """One listing for every lane. A lane not started or adopted here is left to `adopt`; while the
        head does not answer, lanes run elsewhere (their files and time limit decide)."""
        mine = [lane for lane in lanes if (lane.id) in self._jobs]
        seen = {lane.id: UNSEEN for lane in lanes}
        if not mine:
            return seen
        try:
            jobs = await self._listing()
        except RayJobsError as exc:
            log.warning("Ray head unanswered; %d lanes judged by their files meanwhile: %s", len(mine), exc)
            away = Seen(known=False, elsewhere=f"the Ray head {self._ray.address}")
            return seen | {lane.id: away for lane in mine}
        await self._resend(jobs)
        for lane in mine:
            seen[lane.id] = await self._look(lane, jobs)
        return seen

    async def _listing(self) -> dict[str, JobInfo]:
        """Every job of this bot the head knows, by submission id; jobs owed a stop are stopped."""
        try:
            listed = await self._ray.list_jobs()
        except RayJobsError as exc:
            self._failed(exc)
            raise
        self._reached()
        jobs = {job.submission_id: job for job in listed if job.submission_id.startswith(self._prefix)}
        for submission_id in list(self._owed_stops):
            job = jobs.get(submission_id)
            if (
                job is None
                or job.status.terminal
                or (job.status is not JobStatus.PENDING and await self._stop(submission_id))
            ):
                self._owed_stops.discard(submission_id)
        return jobs

    async def _resend(self, jobs: Mapping[str, JobInfo]) -> None:
        """Submits whose answer was lost: a listing without the job sends it again (Ray recognises a
        repeat), one with it needs nothing more."""
        for lane_id, submission in list(self._unsent.items()):
            if submission.submission_id not in jobs:
                try:
                    await self._ray.submit(submission)
                except RayUnreachable:
                    continue
                except RayJobsError as exc:
                    log.warning("lane %s: Ray refused its job: %s", lane_id, exc)
                    self._note(lane_id, f"Ray refused job {submission.submission_id}: {exc}")
                    self._ended[lane_id] = EXIT_UNKNOWN
            self._unsent.pop(lane_id, None)

    async def _look(self, lane: LaneRef, jobs: Mapping[str, JobInfo]) -> Seen:
        lane_id = lane.id
        if lane_id in self._ended:
            return ended(self._ended[lane_id])
        submission_id = self._jobs[lane_id]
        job = jobs.get(submission_id)
        if lane_id in self._unsent:
            return RUNNING  # sent again just now, or the head still cannot be asked
        if job is None:
            return self._end(lane, f"job {submission_id} is lost: the Ray head no longer knows it")
        if job.status is JobStatus.PENDING:
            return await self._pending_too_long(lane, submission_id)
        if not job.status.terminal:
            return RUNNING
        if failed_by_ray(job):
            return self._end(lane, ray_failure(job))
        code = EXIT_UNKNOWN if job.driver_exit_code is None else job.driver_exit_code
        self._ended[lane_id] = code
        return ended(code)

    async def _pending_too_long(self, lane: LaneRef, submission_id: str) -> Seen:
        """A job Ray has not started within `pending_sec` of its claim is failed (retried) and stopped:
        Ray 2.60 takes the stop of a PENDING job yet leaves it PENDING, so it is stopped again should
        it ever run."""
        assert lane.started_at is not None
        if self._clock.now() - lane.started_at <= self._pending:
            return RUNNING
        await self._stop(submission_id)
        self._owed_stops.add(submission_id)
        seconds = int(self._pending.total_seconds())
        return self._end(lane, f"Ray did not start job {submission_id} within {seconds} s (still PENDING)")

    def _end(self, lane: LaneRef, why: str) -> Seen:
        """A lane Ray lost or never ran: ended without an exit code, its log saying why (the report's
        reason); with no trial result it is an infrastructure failure, retried."""
        log.warning("lane %s: %s", lane.id, why)
        self._note(lane.id, why)
        self._ended[lane.id] = EXIT_UNKNOWN
        return ended(EXIT_UNKNOWN)

    def _note(self, lane_id: int, why: str) -> None:
        path = self._logs.get(lane_id)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"{EXECUTOR_NOTE}{why}\n")
        except OSError as exc:
            log.warning("lane %s: could not write to its log %s: %s", lane_id, path, exc)

    async def interrupt(self, lane: LaneRef) -> None:
        """Ray's stop, made SIGINT to Harbor by the job's settings; the wrapper SIGKILLs after the grace."""
        await self._stop_lane(lane)

    async def kill(self, lane: LaneRef) -> None:
        """The wrapper SIGKILLs the lane when the grace is over; a stop that never arrived is sent now."""
        await self._stop_lane(lane)

    async def _stop_lane(self, lane: LaneRef) -> None:
        lane_id = lane.id
        submission_id = self._jobs.get(lane_id)
        if submission_id is None or lane_id in self._ended:
            return
        self._unsent.pop(lane_id, None)  # a job whose submit was unanswered is stopped, never sent again
        if not await self._stop(submission_id):
            self._owed_stops.add(submission_id)

    async def _stop(self, submission_id: str) -> bool:
        """Ask Ray to stop the job; False when the head could not be asked (try again later)."""
        try:
            await self._ray.stop(submission_id)
        except RayJobNotFound:
            return True
        except RayJobsError as exc:
            log.warning("Ray job %s: stop not delivered: %s", submission_id, exc)
            return False
        return True

    async def adopt(self, lanes: Sequence[LaneRef]) -> Adopted:
        """Find a previous process's lanes by submission id, in one listing: a live job is watched again,
        an ended one judged, a missing one (never submitted, or the head restarted) left to the
        reconciliation. A head that does not answer fails the adoption, which is tried again."""
        jobs = await self._listing()
        adopted = Adopted()
        for lane in lanes:
            lane_id = lane.id
            submission_id = self.submission_id(job_name(lane.run_id, lane_id, lane.attempt))
            self._jobs[lane_id] = submission_id
            self._logs[lane_id] = self.log_path(lane)
            job = jobs.get(submission_id)
            if job is not None and not job.status.terminal:
                adopted.running[lane_id] = None
                continue
            code = None if job is None else job.driver_exit_code
            self._ended[lane_id] = EXIT_UNKNOWN if code is None else code
            adopted.ended.append(lane_id)
        return adopted

    def log_path(self, lane: LaneRef) -> Path:
        return self._repo / lane.log_path

    def forget(self, lane_id: int) -> None:
        """Let go of a lane; one let go of before its end was seen (the head was away) is stopped later."""
        submission_id = self._jobs.pop(lane_id, None)
        if submission_id is not None and lane_id not in self._ended:
            self._owed_stops.add(submission_id)
        self._ended.pop(lane_id, None)
        self._unsent.pop(lane_id, None)
        self._logs.pop(lane_id, None)

    # Waiting for lanes (`running_count`, `wait_any`, `wait_all`) is no part of the `Executor` seam: the
    # engine never waits. Tests and benchmarks wait, through their own `Waitable`.

    @property
    def running_count(self) -> int:
        return sum(1 for lane_id in self._jobs if lane_id not in self._ended)

    async def wait_any(self, *, quiet: float = 0.0, longest: float = 0.0) -> None:
        """Poll the listing until a job of a lane not yet seen ended has ended (or is gone)."""
        await self._poll_until(any)

    async def wait_all(self) -> None:
        """Poll the listing until every job started here has ended (or is gone)."""
        await self._poll_until(all)

    async def _poll_until(self, enough: Callable[[Iterable[bool]], bool]) -> None:
        while True:
            waiting = {lane_id: sid for lane_id, sid in self._jobs.items() if lane_id not in self._ended}
            if not waiting:
                return
            try:
                jobs = await self._listing()
            except RayJobsError:
                jobs = None
            if jobs is not None and enough(_over(jobs.get(sid)) for sid in waiting.values()):
                return
            await asyncio.sleep(POLL_SEC)

    def lanes(self) -> Iterable[tuple[int, str]]:
        """Lane id and submission id of every lane started or adopted here (tools and tests)."""
        return self._jobs.items()

    async def close(self) -> None:
        await self._ray.close()


def _over(job: JobInfo | None) -> bool:
    return job is None or job.status.terminal


def _make_log_folders(launches: Sequence[LaneLaunch]) -> None:
    """The lane log's folder, made here as for a local lane: the worker sees the same shared tree."""
    for launch in launches:
        launch.log_path.parent.mkdir(parents=True, exist_ok=True)
