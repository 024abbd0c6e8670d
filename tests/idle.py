"""The tests' stand-in for the engine's timer: tick by hand until there is nothing left to do.

An executor with nothing running proves nothing on its own: a tick can start lanes that end before it
returns, and a lane can end between a tick's look and the count after it. So "idle" is judged the way a
person would: a tick that began with no lane process alive (every exit there was to see), left none
alive (it adopted none) and changed no lane or run in the database (nothing settled, started or
closed) found nothing to do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from lane_waits import running_count, wait_any
from sqlalchemy import select

from bot.engine import Engine
from bot.engine.engine import GATHER_QUIET
from bot.store.db import Store
from bot.store.models import Lane, Run

# How long `run_until_idle` gathers the exits of one wave of lanes before the next tick.
GATHER_LONGEST = 0.02
# No lane of a test runs this long: a lane process that outlives it (a lost signal, a child that never
# exits) fails the test with its lanes named, instead of hanging the whole run.
LANE_PATIENCE = 120.0

Snapshot = tuple[tuple[object, ...], ...]


async def snapshot(store: Store) -> Snapshot:
    """Every lane's and run's state and attempt: what a tick that did something changes."""
    async with store.read() as session:
        lanes = (await session.execute(select(Lane.id, Lane.state, Lane.attempt).order_by(Lane.id))).all()
        runs = (await session.execute(select(Run.id, Run.state).order_by(Run.id))).all()
    return tuple(tuple(row) for row in (*lanes, *runs))


async def run_until_idle(
    engine: Engine,
    store: Store,
    *,
    between: Callable[[], Awaitable[None]] | None = None,
    gather: bool = True,
) -> None:
    """Tick until a tick that began and ended with nothing running changed nothing; lanes' exits drive
    the ticks.
    `between` runs after every tick (say, the notifier's delivery); `gather` waits a moment for the rest
    of a wave of exits, so one tick settles and refills them together."""
    while True:
        quiet = running_count(engine.executor) == 0
        before = await snapshot(store) if quiet else None
        await engine.tick()
        if between is not None:
            await between()
        if quiet and running_count(engine.executor) == 0 and await snapshot(store) == before:
            return
        if running_count(engine.executor):
            await _next_exit(engine, store, gather)


async def _next_exit(engine: Engine, store: Store, gather: bool) -> None:
    """Wait for a lane to end, at most LANE_PATIENCE seconds."""
    quiet, longest = (GATHER_QUIET, GATHER_LONGEST) if gather else (0.0, 0.0)
    try:
        await asyncio.wait_for(wait_any(engine.executor, quiet=quiet, longest=longest), LANE_PATIENCE)
    except TimeoutError:
        lanes = await snapshot(store)
        raise AssertionError(f"no lane ended within {LANE_PATIENCE:.0f} s; lanes and runs: {lanes}") from None
