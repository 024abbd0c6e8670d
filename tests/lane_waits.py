"""Waiting for lanes to end: what tests and benchmarks need of an executor, and the engine never does
(its tick looks, it never waits). So it is no part of the `Executor` seam: the executors of bot/ (and
the tests' fake) offer it beside the seam, and tests and benchmarks reach it through these helpers;
with them `kill_all`, for a test that failed while its lanes run."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from bot.engine import Engine
from bot.engine.lane_ref import lane_ref
from bot.executors.base import Executor
from bot.store.db import Store
from bot.store.lanes import running_lanes


@runtime_checkable
class Waitable(Protocol):
    @property
    def running_count(self) -> int:
        """Lanes started or adopted here and not yet seen to end."""
        ...

    async def wait_any(self, *, quiet: float = 0.0, longest: float = 0.0) -> None:
        """Return once a lane may have ended; with `quiet`, gather the exits of a wave."""
        ...

    async def wait_all(self) -> None:
        """Wait until every lane started here has ended (the end of a test or benchmark)."""
        ...


def waitable(executor: Executor) -> Waitable:
    if not isinstance(executor, Waitable):
        raise TypeError(f"{type(executor).__name__} offers no running_count, wait_any and wait_all")
    return executor


def running_count(executor: Executor) -> int:
    return waitable(executor).running_count


async def wait_any(executor: Executor, *, quiet: float = 0.0, longest: float = 0.0) -> None:
    await waitable(executor).wait_any(quiet=quiet, longest=longest)


async def wait_all(executor: Executor) -> None:
    await waitable(executor).wait_all()


async def kill_all(engine: Engine, store: Store) -> None:
    """Kill every lane the database says is running (a test that failed midway; never on a shutdown)."""
    async with store.read() as session:
        running = await running_lanes(session)
    for lane in running:
        await engine.executor.kill(lane_ref(lane))
