"""A bot on Ray as a real process (`python -m bot serve`, CSB_EXECUTOR=ray), SIGKILLed with lanes
running as Ray jobs and started again: the jobs run on without it, the new process finds them by
submission id and starts only the lanes still queued, and the run finishes with every lane attempt one
Ray job, none submitted twice, and the report posted once.

The process runs real timers, so the test polls the database and the head until a deadline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bot_process import REPORT, World, every_lane_ran_once, request_and_approve, world
from harness import CHANNEL
from ray_cluster import RayHead
from ray_jobs_kit import jobs_of_checkout
from waiting import until

from bot.csb.harbor_run import job_name
from bot.executors.ray import submission_prefix
from bot.rayjobs.jobs_api import JobStatus

pytestmark = pytest.mark.slow


async def running_jobs(head: RayHead, w: World) -> int:
    return sum(job.status is JobStatus.RUNNING for job in (await jobs_of_checkout(head, w.repo)).values())


async def test_a_sigkilled_bot_on_ray_adopts_its_jobs_and_submits_none_twice(
    tmp_path: Path, ray_head: RayHead
) -> None:
    async with world(tmp_path, f"sqlite:///{tmp_path / 'bot.db'}") as w:
        w.env.update(
            CSB_EXECUTOR="ray",
            CSB_RAY_ADDRESS=ray_head.dashboard_url,
            CSB_RAY_LANE_RESOURCE="csb_slot",
            HARBOR_STANDIN_DELAY="5",  # the first lanes outlive the first bot
        )
        first = await w.start_bot()
        card = await request_and_approve(w, first, "run csb_sdlc_fix --parallel 4")
        # Killed at the first job RUNNING: Ray starts one supervisor at a time, slowly on a loaded machine,
        # so waiting for more could see the first lanes end before the kill.
        await until(lambda: _running(head=ray_head, w=w, count=1), "a lane running as a Ray job")
        first.kill()
        states = await w.lane_states()
        assert states.count("running") == 4 and states.count("queued") == 2, states
        assert await running_jobs(ray_head, w) >= 1  # Ray's jobs run on without the bot

        w.env["HARBOR_STANDIN_DELAY"] = "0"
        await w.start_bot()
        await until(w.finished, "the run to finish")

        lanes = await w.lanes()
        assert len(lanes) == 6 and all(lane.attempt == 1 for lane in lanes), lanes
        jobs = await jobs_of_checkout(ray_head, w.repo)
        prefix = submission_prefix(w.repo)
        assert set(jobs) == {prefix + job_name(lane.run_id, lane.id or 0, 1) for lane in lanes}
        assert {job.status for job in jobs.values()} == {JobStatus.SUCCEEDED}
        await every_lane_ran_once(w)

        def reports() -> list[dict[str, Any]]:
            return [m for m in w.standin.thread(CHANNEL, card) if REPORT.search(str(m))]

        await until(reports, "the report in the card's thread")
        assert len(reports()) == 1


async def _running(*, head: RayHead, w: World, count: int) -> bool:
    return await running_jobs(head, w) >= count
