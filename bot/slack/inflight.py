"""Listener work still running after its ack.

Bolt answers Slack as soon as a listener acks and runs the rest in the background; this counts that
rest, so shutdown can let it finish and tests can wait for it instead of sleeping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class InFlight:
    """`work_slots` bounds the work after acks: a burst of 500 `/csb run` must not starve the event
    loop, or the acks of the next requests (due within 3 s) wait behind database writes."""

    def __init__(self, work_slots: int = 2) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._slots = asyncio.Semaphore(work_slots)

    @asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        """Enter before `ack()`: the count is up before Slack's answer leaves, so `wait_idle` sees it."""
        self._count += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._count -= 1
            if self._count == 0:
                self._idle.set()

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Enter after `ack()`, around the listener's real work."""
        async with self._slots:
            yield

    async def wait_idle(self) -> None:
        await self._idle.wait()
