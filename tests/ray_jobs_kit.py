"""Reading a test head's jobs the way the bot does, through its own Jobs API client: one job waited
until it ended, or every job of one checkout (the bot's submission ids start with its checkout's
prefix, so tests sharing the session's head see only their own)."""

from __future__ import annotations

from pathlib import Path

from ray_cluster import RayHead
from waiting import until

from bot.executors.ray import submission_prefix
from bot.rayjobs.jobs_api import JobInfo, RayJobsClient


async def ended(ray: RayJobsClient, submission_id: str) -> JobInfo:
    """The job as Ray reports it once it has ended (STOPPED, SUCCEEDED or FAILED)."""
    seen: list[JobInfo] = []

    async def over() -> bool:
        seen.append(await ray.job(submission_id))
        return seen[-1].status.terminal

    await until(over, f"job {submission_id} to end")
    return seen[-1]


async def jobs_of_checkout(head: RayHead, repo: Path) -> dict[str, JobInfo]:
    """The jobs the bot of this checkout submitted to the head, by submission id, in one listing."""
    async with RayJobsClient(head.dashboard_url) as ray:
        listed = await ray.list_jobs()
    prefix = submission_prefix(repo)
    return {job.submission_id: job for job in listed if job.submission_id.startswith(prefix)}
