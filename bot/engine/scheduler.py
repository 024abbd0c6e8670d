"""APScheduler only triggers ticks; what a tick decides reads the injected clock.

Serving stops by letting the ticks under way finish: APScheduler's asyncio executor would cancel them
at shutdown, and an engine tick cut short between its claim and its spawns leaves lanes claimed with no
process until the next holder reconciles them (and logs each cut tick as an error on every deploy).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from apscheduler.schedulers.asyncio import AsyncIOScheduler

Tick = Callable[[], Awaitable[object]]

# The longest wait at shutdown for ticks under way (their statements give up after 10 s); past it
# they are cancelled, as before, and a successor reconciles what they left.
STOP_GRACE_SECONDS = 20.0


class Timers:
    """One interval job per tick; a tick still running when the next is due is skipped, not stacked."""

    def __init__(self, ticks: dict[str, tuple[Tick, float]]) -> None:
        self._running: set[asyncio.Task[object]] = set()
        self._scheduler = AsyncIOScheduler(timezone="UTC")
        for name, (tick, seconds) in ticks.items():
            self._scheduler.add_job(
                self._tracked(tick),
                "interval",
                seconds=seconds,
                id=name,
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
            )

    def start(self) -> None:
        self._scheduler.start()

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Start no more ticks, let those under way finish (within `grace`), then stop the scheduler."""
        self._scheduler.pause()
        if self._running:
            await asyncio.wait(set(self._running), timeout=grace)
        self._scheduler.shutdown(wait=False)

    def _tracked(self, tick: Tick) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            task = asyncio.current_task()
            assert task is not None
            self._running.add(task)
            try:
                await tick()
            finally:
                self._running.discard(task)

        return run


def start_timers(ticks: dict[str, tuple[Tick, float]]) -> Timers:
    timers = Timers(ticks)
    timers.start()
    return timers
