"""The timers: serving stops by letting a tick under way finish, not by cancelling it mid-way."""

from __future__ import annotations

import asyncio

from waiting import until

from bot.engine.scheduler import Timers


class Tick:
    """A tick that holds until the test lets it go, counting how its runs ended."""

    def __init__(self) -> None:
        self.started = 0
        self.finished = 0
        self.cancelled = 0
        self.release = asyncio.Event()

    async def __call__(self) -> None:
        self.started += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        self.finished += 1


async def test_a_tick_under_way_when_serving_stops_is_waited_for_not_cancelled() -> None:
    tick = Tick()
    timers = Timers({"engine": (tick, 0.01)})
    timers.start()
    await until(lambda: tick.started == 1, "the first tick to start")
    stopping = asyncio.ensure_future(timers.stop())
    for _ in range(10):
        await asyncio.sleep(0)  # let `stop` run as far as it goes: to waiting for the tick
    assert not stopping.done()
    tick.release.set()
    await stopping
    assert (tick.started, tick.finished, tick.cancelled) == (1, 1, 0)


async def test_a_tick_that_does_not_finish_within_the_grace_is_cancelled() -> None:
    tick = Tick()
    timers = Timers({"engine": (tick, 0.01)})
    timers.start()
    await until(lambda: tick.started == 1, "the first tick to start")
    await timers.stop(grace=0.05)
    await until(lambda: tick.cancelled == 1, "the hung tick to be cancelled")
    assert tick.finished == 0 and tick.started == 1


async def test_stopping_with_no_tick_under_way_returns_at_once() -> None:
    tick = Tick()
    timers = Timers({"engine": (tick, 3600)})
    timers.start()
    await asyncio.wait_for(timers.stop(), timeout=5)
    assert tick.started == 0
