"""Lanes on a real Ray head, through the engine, with the example bench: each lane attempt is one job,
outcomes as on the local executor; Cancel stops the jobs; a restarted bot submits nothing twice; a
head that restarted (or was away) loses its lanes, which are retried; a job Ray never starts, or fails
itself (before the lane ran, or by its supervisor's death under it), is an infrastructure failure with
Ray's reason in one line. The job listing never carries a Slack secret, the Ray token or the database URL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from engine_kit import EngineKit, engine_kit
from idle import run_until_idle
from lane_waits import running_count
from ray_cluster import RayHead, describe_pids, free_port, marked_pids
from ray_jobs_kit import jobs_of_checkout
from sqlmodel import select
from waiting import until

from bot.domain.outcome import LaneStatus
from bot.executors.processes import MARKER_ENV
from bot.executors.ray import submission_prefix
from bot.executors.ray_settings import RaySettings
from bot.rayjobs.jobs_api import JobInfo, JobStatus
from bot.store import runs
from bot.store.models import Lane, OutboxItem, RunState

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"
ONBOARDING = "service-owner-onboarding-001"  # the one task of csb_org_onboarding: a single pair
SECRETS = {
    "SLACK_BOT_TOKEN": "xoxb-never-on-ray-51c2",
    "SLACK_SIGNING_SECRET": "signing-never-on-ray-9d0e",
    "CSB_RAY_TOKEN": "ray-token-never-on-ray-77aa",
    "CSB_DATABASE_URL": "postgresql+asyncpg://csb:db-pass-never-on-ray-3f1a@db.example/csb",
}


@asynccontextmanager
async def ray_kit(tmp_path: Path, head: RayHead, **config: Any) -> AsyncIterator[EngineKit]:
    pending = config.pop("ray_pending_sec", 300)
    resource = config.pop("ray_lane_resource", "csb_slot")
    address = config.pop("ray_address", head.dashboard_url)
    # Not validated: a test may ask for a resource the settings refuse (`bundle`) to see what Ray does.
    settings = RaySettings.model_construct(address=address, lane_resource=resource, pending_sec=pending)
    async with engine_kit(tmp_path, executor=settings, **config) as kit:
        kit.env.update(SECRETS)
        yield kit


async def jobs_of(kit: EngineKit, head: RayHead) -> dict[str, JobInfo]:
    """This kit's jobs on the head, by submission id."""
    return await jobs_of_checkout(head, kit.repo)


def job_id(kit: EngineKit, run_id: int, lane_id: int, attempt: int) -> str:
    return f"{submission_prefix(kit.repo)}csb_r{run_id}_l{lane_id}_a{attempt}"


async def kit_job_log(head: RayHead, submission_id: str) -> str:
    """A job's driver log as Ray keeps it (the lane wrapper's own lines), for a failure's message."""
    url = f"{head.dashboard_url}/api/jobs/{submission_id}/logs"
    async with aiohttp.ClientSession() as session, session.get(url) as answer:
        return f"--- {submission_id}:\n" + (await answer.json(content_type=None)).get("logs", "")[-3000:]


def raw_listing(head: RayHead) -> str:
    with urllib.request.urlopen(f"{head.dashboard_url}/api/jobs/", timeout=10) as answer:
        return answer.read().decode()


async def wait_running(kit: EngineKit, head: RayHead, count: int) -> None:
    async def running() -> bool:
        jobs = await jobs_of(kit, head)
        return sum(job.status is JobStatus.RUNNING for job in jobs.values()) >= count

    await until(running, f"{count} jobs RUNNING on the head")


async def run_to_the_end(kit: EngineKit, run_id: int, step: float = 11) -> None:
    """Tick, and move the clock past retry backoffs, until the run ended."""

    async def over() -> bool:
        await run_until_idle(kit.engines[-1], kit.store)
        if (await kit.run(run_id)).state in (RunState.FINISHED, RunState.CANCELLED):
            return True
        kit.clock.advance(timedelta(seconds=step))
        return False

    await until(over, f"run {run_id} to end", deadline=90)


def expected_fix_outcomes() -> dict[tuple[str, str], tuple[str, float | None]]:
    return {
        (SLUG, "baseline"): ("passed", 1.0),
        (SLUG, "mcp"): ("passed", 1.0),
        (PAGE, "baseline"): ("failed", 0.0),
        (PAGE, "mcp"): ("passed", 1.0),
        (MERGE, "baseline"): ("failed", 0.0),
        (MERGE, "mcp"): ("passed", 0.5),
    }


async def outcomes(kit: EngineKit, run_id: int) -> dict[tuple[str, str], tuple[str, float | None]]:
    return {(lane.task_id, lane.role): (lane.state.value, lane.reward) for lane in await kit.lanes(run_id)}


async def test_a_paired_run_is_one_job_per_lane_and_no_secret_reaches_ray(
    tmp_path: Path, ray_head: RayHead
) -> None:
    async with ray_kit(tmp_path, ray_head) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        assert await outcomes(kit, run_id) == expected_fix_outcomes()
        assert (await kit.run(run_id)).state is RunState.FINISHED
        lanes = await kit.lanes(run_id)
        jobs = await jobs_of(kit, ray_head)
        assert set(jobs) == {job_id(kit, run_id, lane.id or 0, 1) for lane in lanes}
        assert {job.status for job in jobs.values()} == {JobStatus.SUCCEEDED}
        assert all(lane.attempt == 1 and lane.exit_code == 0 for lane in lanes)
        listing = raw_listing(ray_head)
        assert (
            "SLACK_" not in listing and "CSB_RAY_TOKEN" not in listing and "CSB_DATABASE_URL" not in listing
        )
        assert not any(secret in listing for secret in SECRETS.values())
        assert "db-pass-never-on-ray-3f1a" not in listing
        # The head is the session's: the listing holds other tests' jobs too, so this run's is found by id.
        (own, *_) = [job for job in json.loads(listing) if job["submission_id"] in jobs]
        assert {"HOME", "BASELINE_MCP_TYPE", MARKER_ENV} <= set(own["runtime_env"]["env_vars"])


async def test_cancel_stops_the_jobs_and_starts_nothing_after(tmp_path: Path, ray_head: RayHead) -> None:
    async with ray_kit(tmp_path, ray_head) as kit:
        kit.script({SLUG: "hang", PAGE: "hang", MERGE: "hang"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        running = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(running) == 2
        await wait_running(kit, ray_head, 2)
        await until(
            lambda: all(marked_pids(MARKER_ENV, lane.marker or "") for lane in running), "the lanes' Harbor"
        )
        async with kit.store.write() as session:
            assert await runs.move_run(
                session, run_id, from_states=[RunState.RUNNING], to=RunState.CANCELLING
            )
        await run_to_the_end(kit, run_id)
        lanes = {lane.id: lane for lane in await kit.lanes(run_id)}
        assert all(lanes[lane.id].state is LaneStatus.CANCELLED for lane in running)
        jobs = await jobs_of(kit, ray_head)
        assert set(jobs) == {job_id(kit, run_id, lane.id or 0, 1) for lane in running}  # none after
        assert {job.status for job in jobs.values()} == {JobStatus.STOPPED}
        try:
            await until(
                lambda: not any(marked_pids(MARKER_ENV, lane.marker or "") for lane in running),
                "the stopped lanes' processes to be gone",
            )
        except AssertionError as exc:  # say which processes stayed, and what their jobs logged
            left = [pid for lane in running for pid in marked_pids(MARKER_ENV, lane.marker or "")]
            logs = [await kit_job_log(ray_head, job) for job in sorted(jobs)]
            raise AssertionError(f"{exc}\n{describe_pids(left)}\n" + "\n".join(logs)) from None


async def test_a_restarted_bot_adopts_its_jobs_and_submits_none_twice(
    tmp_path: Path, ray_head: RayHead
) -> None:
    async with ray_kit(tmp_path, ray_head) as kit:
        kit.env["HARBOR_STANDIN_DELAY"] = "4"
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()  # one pair submitted; this bot then dies without a word
        await wait_running(kit, ray_head, 2)
        first = {lane.id for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING}
        kit.engines.remove(kit.engine)  # SIGKILLed: no shutdown, its jobs run on
        kit.new_engine()
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        await kit.engine.tick()  # takes the lease, adopts the running pair by submission id
        assert running_count(kit.engine.executor) == 2
        await run_to_the_end(kit, run_id)
        assert await outcomes(kit, run_id) == {
            (ONBOARDING, "baseline"): ("failed", 0.0),
            (ONBOARDING, "mcp"): ("passed", 1.0),
        }
        lanes = await kit.lanes(run_id)
        assert all(lane.attempt == 1 for lane in lanes) and first == {lane.id for lane in lanes}
        jobs = await jobs_of(kit, ray_head)
        assert set(jobs) == {job_id(kit, run_id, lane.id or 0, 1) for lane in lanes}


async def test_a_head_away_then_restarted_pauses_starts_and_retries_its_lost_lanes(
    tmp_path: Path, ray_head: RayHead
) -> None:
    async with ray_kit(tmp_path, ray_head) as kit:
        kit.env["HARBOR_STANDIN_DELAY"] = "60"
        run_id = await kit.approve("csb_sdlc_fix", parallel=4)
        await kit.engine.tick()
        await wait_running(kit, ray_head, 4)
        lost = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        await asyncio.to_thread(ray_head.crash)
        kit.env["HARBOR_STANDIN_DELAY"] = "0"
        for _ in range(3):  # away: nothing starts, nothing is lost, the run is told once
            kit.clock.advance(timedelta(seconds=30))
            await kit.engine.tick()
        states = await kit.states(run_id)
        assert sorted(states.values()) == ["queued"] * 2 + ["running"] * 4
        assert await _notes(kit, run_id, "executor_away") == 1
        await asyncio.to_thread(ray_head.start)  # back, without the jobs it knew
        await run_to_the_end(kit, run_id)
        assert await outcomes(kit, run_id) == expected_fix_outcomes()
        lanes = {lane.id: lane for lane in await kit.lanes(run_id)}
        for lane in lost:
            again = lanes[lane.id]
            assert again.attempt == 2 and again.infra_failures == 1
        logs = [path for path in (kit.repo / "runs").rglob("*") if path.is_file()]
        told = [
            path for path in logs if "the Ray head no longer knows it" in path.read_text(errors="replace")
        ]
        assert len(told) == len(lost)  # each lost attempt's log, moved aside by its retry, says why
        assert await _notes(kit, run_id, "executor_back") == 1


async def test_a_job_ray_never_starts_is_an_infrastructure_failure(tmp_path: Path, ray_head: RayHead) -> None:
    """The lanes ask for a resource no node offers: Ray keeps the jobs PENDING, and past the bound the
    bot stops them and retries the lanes as any infrastructure failure."""
    async with ray_kit(tmp_path, ray_head, ray_lane_resource="csb_no_such_slot", ray_pending_sec=20) as kit:
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        first = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        kit.clock.advance(timedelta(seconds=15))
        await kit.engine.tick()
        jobs = await jobs_of(kit, ray_head)
        assert {job.status for job in jobs.values()} == {JobStatus.PENDING}
        kit.clock.advance(timedelta(seconds=10))
        await kit.engine.tick()
        lanes = {lane.id: lane for lane in await kit.lanes(run_id)}
        for lane in first:
            again = lanes[lane.id]
            assert again.infra_failures == 1 and "still PENDING" in (again.reason or "")
        kit.clock.advance(timedelta(seconds=kit.config.retry_backoff_sec + 1))
        await kit.engine.tick()  # the retries are new jobs; Ray keeps the first ones PENDING
        jobs = await jobs_of(kit, ray_head)
        assert set(jobs) == {
            job_id(kit, run_id, lane.id or 0, attempt) for lane in first for attempt in (1, 2)
        }
        assert {job.status for job in jobs.values()} == {JobStatus.PENDING}
        async with kit.store.write() as session:  # no node will ever run them: cancel the run
            await runs.move_run(
                session, run_id, from_states=[RunState.RUNNING, RunState.PAUSED], to=RunState.CANCELLING
            )
        await kit.engine.tick()  # the stop Ray takes and does nothing with
        kit.clock.advance(timedelta(seconds=21))
        await kit.engine.tick()  # past the bound: ended, and so cancelled
        await kit.engine.tick()
        assert (await kit.run(run_id)).state is RunState.CANCELLED


async def retried_once(kit: EngineKit, run_id: int, lane_ids: set[int]) -> dict[int, Lane]:
    """Tick until each of these lanes has had one infrastructure failure, and return them as then."""
    lanes: dict[int, Lane] = {}

    async def failed_once() -> bool:
        await kit.engine.tick()
        lanes.update({lane.id or 0: lane for lane in await kit.lanes(run_id) if lane.id in lane_ids})
        return all(lane.infra_failures == 1 for lane in lanes.values())

    await until(failed_once, "each lane's first infrastructure failure")
    return lanes


def last_lines(kit: EngineKit) -> dict[str, str]:
    """The last line of each lane log under `runs/` that ends with the bot's note on a Ray job, by the
    job's submission id."""
    found = {}
    for path in (kit.repo / "runs").rglob("*"):
        if path.is_file():
            lines = path.read_text(errors="replace").splitlines()
            if lines and lines[-1].startswith("ray: Ray failed job "):
                found[lines[-1].split()[4]] = lines[-1]
    return found


def supervisor_of(lane: Lane) -> int:
    """The pid of Ray's supervisor actor of the lane's job (it carries the job's env_vars, the marker)."""
    for pid in marked_pids(MARKER_ENV, lane.marker or ""):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"ray::JobSupervisor"):
                return pid
    raise AssertionError(f"lane {lane.id}: no job supervisor found")


async def test_a_job_ray_fails_before_its_lane_ran_is_retried_with_ray_s_reason(
    tmp_path: Path, ray_head: RayHead
) -> None:
    """The lanes ask for a resource named `bundle`, which Ray reserves: the head takes each job, then
    fails it at once without starting its supervisor (FAILED, no exit code). Each lane is an
    infrastructure failure, its reason Ray's own line and not its traceback, and is retried."""
    async with ray_kit(tmp_path, ray_head, ray_lane_resource="bundle") as kit:
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        first = {lane.id or 0 for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING}
        assert len(first) == 2
        for lane in (await retried_once(kit, run_id, first)).values():
            sid = job_id(kit, run_id, lane.id or 0, 1)
            told = (
                f"Ray failed job {sid} before its lane ran (JOB_SUPERVISOR_ACTOR_START_FAILURE: Failed to "
                f"start supervisor actor {sid}: 'The resource should not include `bundle` which is "
                "reserved for Ray. resources: {'bundle': 1.0}'.)"
            )
            # Ray's word is the reason; Harbor, which never ran, is not named.
            assert (lane.reason or "").startswith(f"retry 1/3 after: {told[:100]}"), lane.reason
            assert "harbor" not in (lane.reason or "").lower(), lane.reason
            assert last_lines(kit)[sid] == f"ray: {told}"  # the attempt's log, moved aside by its retry
        jobs = await jobs_of(kit, ray_head)
        assert {job.status for job in jobs.values()} == {JobStatus.FAILED}
        assert {job.driver_exit_code for job in jobs.values()} == {None}
        assert not kit.trial_dirs()  # no lane ran
        async with kit.store.write() as session:  # every retry would fail alike: cancel the run
            await runs.move_run(
                session, run_id, from_states=[RunState.RUNNING, RunState.PAUSED], to=RunState.CANCELLING
            )
        await run_to_the_end(kit, run_id)
        assert (await kit.run(run_id)).state is RunState.CANCELLED


async def test_a_lane_whose_job_supervisor_died_is_retried_and_finishes(
    tmp_path: Path, ray_head: RayHead
) -> None:
    """Each job's supervisor SIGKILLed with its lane running, as the OOM killer would: Ray kills the
    lane's processes and fails the job without an exit code. Each lane is an infrastructure failure
    with Ray's one-line reason, retried as a new job, and the run's outcomes are right."""
    async with ray_kit(tmp_path, ray_head) as kit:
        kit.env["HARBOR_STANDIN_DELAY"] = "60"
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        await wait_running(kit, ray_head, 2)
        running = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        await until(lambda: all(marked_pids(MARKER_ENV, lane.marker or "") for lane in running), "Harbor")
        for lane in running:
            os.kill(supervisor_of(lane), signal.SIGKILL)
        kit.env["HARBOR_STANDIN_DELAY"] = "0"
        for lane in (await retried_once(kit, run_id, {lane.id or 0 for lane in running})).values():
            sid = job_id(kit, run_id, lane.id or 0, 1)
            told = (
                f"Ray failed job {sid} while its lane ran (JOB_SUPERVISOR_ACTOR_DIED: Job supervisor "
                "actor died: The actor died unexpectedly before finishing this task.)"
            )
            assert (lane.reason or "").startswith(f"retry 1/3 after: {told[:100]}"), lane.reason
            assert last_lines(kit)[sid] == f"ray: {told}"
        await until(lambda: not any(marked_pids(MARKER_ENV, lane.marker or "") for lane in running), "gone")
        await run_to_the_end(kit, run_id)
        assert await outcomes(kit, run_id) == {
            (ONBOARDING, "baseline"): ("failed", 0.0),
            (ONBOARDING, "mcp"): ("passed", 1.0),
        }
        jobs = await jobs_of(kit, ray_head)
        for lane in running:
            first, again = job_id(kit, run_id, lane.id or 0, 1), job_id(kit, run_id, lane.id or 0, 2)
            assert (jobs[first].status, jobs[first].error_type) == (
                JobStatus.FAILED,
                "JOB_SUPERVISOR_ACTOR_DIED",
            )
            assert jobs[again].status is JobStatus.SUCCEEDED
        assert len(jobs) == 4


class Ingress:
    """A proxy in front of the head's dashboard, as an ingress would be: it passes every request on,
    except the submits it was told to answer itself, by submission id, in turn: `lost` passes the submit
    on and answers 504 (its wait for the head ran out), `refused` answers 503 without passing it on."""

    def __init__(self, head: str) -> None:
        self.head = head
        self.submits: dict[str, list[str]] = {}
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None

    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self._client = aiohttp.ClientSession()
        return f"http://127.0.0.1:{port}"

    async def _answer(self, request: web.Request) -> web.Response:
        body = await request.read()
        told = ""
        if request.method == "POST" and request.path == "/api/jobs/":
            script = self.submits.get(json.loads(body)["submission_id"])
            told = script.pop(0) if script else ""
        if told == "refused":
            return web.Response(status=503, text="<html><body>503 Service Unavailable</body></html>")
        assert self._client is not None
        async with self._client.request(request.method, self.head + request.path_qs, data=body) as answer:
            text = await answer.text()
        if told == "lost":
            return web.Response(status=504, text="upstream request timeout")
        return web.Response(status=answer.status, text=text, content_type="application/json")

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
        if self._runner is not None:
            await self._runner.cleanup()


async def test_submits_a_proxy_refused_or_lost_run_each_lane_once(tmp_path: Path, ray_head: RayHead) -> None:
    """One lane's submit reaches the head but its answer is a 504: the job is found in the next listing
    and is the attempt, never submitted under a new one. The other's is refused (503) and again when
    sent once more: an infrastructure failure with the proxy's reason, whose retry runs."""
    ingress = Ingress(ray_head.dashboard_url)
    address = await ingress.start()
    try:
        async with ray_kit(tmp_path, ray_head, ray_address=address) as kit:
            run_id = await kit.approve("csb_org_onboarding", parallel=2)
            lost, refused = [lane.id or 0 for lane in await kit.lanes(run_id)]
            ingress.submits = {
                job_id(kit, run_id, lost, 1): ["lost"],
                job_id(kit, run_id, refused, 1): ["refused", "refused"],
            }
            await kit.engine.tick()
            failed = await retried_once(kit, run_id, {refused})
            assert "answered HTTP 503: <html><body>503 Service Unavailable</body></html>" in (
                failed[refused].reason or ""
            ), failed[refused].reason
            await run_to_the_end(kit, run_id)
            assert await outcomes(kit, run_id) == {
                (ONBOARDING, "baseline"): ("failed", 0.0),
                (ONBOARDING, "mcp"): ("passed", 1.0),
            }
            lanes = {lane.id or 0: lane for lane in await kit.lanes(run_id)}
            assert (lanes[lost].attempt, lanes[lost].infra_failures) == (1, 0)
            assert (lanes[refused].attempt, lanes[refused].infra_failures) == (2, 1)
            jobs = await jobs_of(kit, ray_head)
            assert set(jobs) == {job_id(kit, run_id, lost, 1), job_id(kit, run_id, refused, 2)}
            assert len(kit.trial_dirs()) == 2
            assert ingress.submits == {job_id(kit, run_id, lost, 1): [], job_id(kit, run_id, refused, 1): []}
    finally:
        await ingress.close()


async def _notes(kit: EngineKit, run_id: int, what: str) -> int:
    async with kit.store.read() as session:
        rows = await session.execute(select(OutboxItem.target).where(OutboxItem.run_id == run_id))
    return sum(f":{what}:" in target for target in rows.scalars())
