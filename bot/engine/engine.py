"""The engine: one tick watches running lanes, then fills free slots. Timers only call `tick`."""

from __future__ import annotations

import asyncio
import logging

from bot.engine.dispatch import Dispatcher
from bot.engine.executor import LocalExecutor
from bot.engine.watch import Watcher

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, dispatcher: Dispatcher, watcher: Watcher, executor: LocalExecutor) -> None:
        self._dispatcher = dispatcher
        self._watcher = watcher
        self.executor = executor
        self._lock = asyncio.Lock()

    async def tick(self) -> None:
        """Watch first so slots freed by finished lanes are refilled in the same tick."""
        async with self._lock:  # a slow tick and the next timer firing must not interleave
            await self._watcher.watch()
            await self._dispatcher.pump()

    async def run_until_idle(self) -> None:
        """Tick until nothing is running or queued: for tests and benchmarks, never a timer."""
        while True:
            await self.tick()
            if self.executor.running_count == 0:
                await self.tick()
                if self.executor.running_count == 0:
                    return
            await self.executor.wait_any()
