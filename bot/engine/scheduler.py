"""APScheduler only triggers ticks; what a tick decides reads the injected clock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler

Tick = Callable[[], Awaitable[object]]


def start_timers(ticks: dict[str, tuple[Tick, float]]) -> AsyncIOScheduler:
    """One interval job per tick; a tick still running when the next is due is skipped, not stacked."""
    scheduler = AsyncIOScheduler(timezone="UTC")
    for name, (tick, seconds) in ticks.items():
        scheduler.add_job(
            tick,
            "interval",
            seconds=seconds,
            id=name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=None,
        )
    scheduler.start()
    return scheduler
