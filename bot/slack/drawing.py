"""Charts are drawn in a worker process, not a thread: matplotlib holds the GIL while it renders, so a
thread would take the event loop away from Slack's acks for tenths of a second at a time
(`bench/compare_report.py` measures both). One process, started on first use with `spawn` (never a
fork of a process running an event loop and threads), at a lower priority than the bot, kept for the
next chart, and ended with the bot (the executor's workers are joined when the interpreter exits).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")
# Below the bot's own priority: on a busy machine the kernel gives the bot's acks the core first.
NICENESS = 10

_pool: ProcessPoolExecutor | None = None


async def in_worker(work: Callable[..., T], *args: object) -> T:
    """`work(*args)` in the drawing process; `work` and its arguments must pickle (module-level, records)."""
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=os.nice,
            initargs=(NICENESS,),
        )
    try:
        return await asyncio.get_running_loop().run_in_executor(_pool, work, *args)
    except BrokenProcessPool:
        _pool = None  # the worker died (killed, out of memory): the next chart starts a new one
        raise
