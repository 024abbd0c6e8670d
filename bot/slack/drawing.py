"""Charts are drawn in a worker process, not a thread: matplotlib holds the GIL while it renders, so a
thread would take the event loop away from Slack's acks for tenths of a second at a time
(`bench/compare_report.py` measures both). One process, started on first use with `spawn` (never a
fork of a process running an event loop and threads), at a lower priority than the bot, kept for the
next chart, and ended with the bot: joined when the interpreter exits, and killed by the kernel when
the bot is killed (Linux's parent-death signal), so a SIGKILLed bot leaves no drawing process behind.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")
# Below the bot's own priority: on a busy machine the kernel gives the bot's acks the core first.
NICENESS = 10
_PR_SET_PDEATHSIG = 1  # prctl(2)

_pool: ProcessPoolExecutor | None = None


async def in_worker(work: Callable[..., T], *args: object) -> T:
    """`work(*args)` in the drawing process; `work` and its arguments must pickle (module-level, records)."""
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            initargs=(os.getpid(),),
        )
    try:
        return await asyncio.get_running_loop().run_in_executor(_pool, work, *args)
    except BrokenProcessPool:
        _pool = None  # the worker died (killed, out of memory): the next chart starts a new one
        raise


def _start_worker(parent: int) -> None:
    """In the drawing process: a lower priority, and the kernel's SIGKILL when the bot dies (Linux; a
    bot that died before this line ran is seen by the parent pid, and the worker ends at once)."""
    os.nice(NICENESS)
    name = ctypes.util.find_library("c")
    if name is not None:
        ctypes.CDLL(name, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)
