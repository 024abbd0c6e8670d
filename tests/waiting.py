"""Waiting for a condition, never for a time: a poll with a generous deadline, so a loaded machine only
makes a test slower, not red. The deadline is a bound on a hang, not an expectation of speed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

DEADLINE = 150.0
POLL = 0.05


async def until(check: Callable[[], object], what: str, deadline: float = DEADLINE) -> None:
    """Poll `check` (a function or a coroutine function) until it returns something truthy."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > end:
            raise AssertionError(f"timed out after {deadline:.0f} s waiting for {what}")
        await asyncio.sleep(POLL)
