"""Listener work still running after its ack, and whose turn it is to run.

A listener acks and returns; Bolt answers Slack as it returns, and the rest runs here in a task of its
own (`start`). This counts that rest, so shutdown can let it finish and tests can wait for it instead of
sleeping. It also orders the rest: each person's work runs one at a time, in arrival order, and only a
few people's work at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from typing import Any

ANSWERS_FIRST_SEC = 1.0
"""The longest a request's work waits for the requests still arriving to be acked (Slack allows 3 s)."""


class InFlight:
    """`work_slots` bounds the work after acks across everyone: a burst of 500 `/csb run` must not starve
    the event loop, or the acks of the next requests (due within 3 s) wait behind database writes.

    A person's work waits for their own earlier work first, and only then for a shared slot: a burst
    from one person, or a request waiting on a slow CSB script, holds one slot, so other people's
    replies still go out.

    Answers come first: work that has its slot starts once no request is being answered (`answering`,
    from its arrival to its ack), or after `answers_first_sec` at most, so a burst's acks are not
    queued behind the work of the requests acked before them, and a long burst never starves the work.
    """

    def __init__(self, work_slots: int = 4, answers_first_sec: float = ANSWERS_FIRST_SEC) -> None:
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._slots = asyncio.Semaphore(work_slots)
        self._people: dict[str, _Turns] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # held, so the loop does not drop work under way
        self._answers_first_sec = answers_first_sec
        self._answering = 0  # requests between their arrival and their ack
        self._answered = asyncio.Event()
        self._answered.set()

    @asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        """Enter before `ack()`: the count is up before Slack's answer leaves, so `wait_idle` sees it."""
        self._up()
        try:
            yield
        finally:
            self._down()

    @contextmanager
    def answering(self) -> Iterator[None]:
        """Around one request, from its arrival to its ack (the HTTP handler, a Socket Mode envelope)."""
        self._answering += 1
        self._answered.clear()
        try:
            yield
        finally:
            self._answering -= 1
            if self._answering == 0:
                self._answered.set()

    async def answers_first(self) -> None:
        """Wait until no request is being answered, `answers_first_sec` at most."""
        if self._answering:
            with suppress(TimeoutError):
                await asyncio.wait_for(self._answered.wait(), self._answers_first_sec)

    def start(self, work: Coroutine[Any, Any, None], failed: Callable[[BaseException], object]) -> None:
        """Runs `work` in a task of its own, counted until it ends; an exception it ends with goes to
        `failed`. Called before the listener returns, so the count is up before Slack's answer leaves.
        Tasks start in the order they are made, so each person's `turn` is taken in arrival order."""
        self._up()
        task = asyncio.create_task(work)
        self._tasks.add(task)

        def ended(done: asyncio.Task[None]) -> None:
            self._tasks.discard(done)
            self._down()
            if not done.cancelled() and (error := done.exception()) is not None:
                failed(error)

        task.add_done_callback(ended)

    def _up(self) -> None:
        self._count += 1
        self._idle.clear()

    def _down(self) -> None:
        self._count -= 1
        if self._count == 0:
            self._idle.set()

    @asynccontextmanager
    async def turn(self, person: str) -> AsyncIterator[None]:
        """Enter after `ack()`, around the listener's real work: `person`'s turn, then a shared slot."""
        turns = self._people.setdefault(person, _Turns())
        turns.waiting += 1
        try:
            async with turns.lock, self._slots:
                await self.answers_first()
                yield
        finally:
            turns.waiting -= 1
            if turns.waiting == 0:
                del self._people[person]

    async def wait_idle(self) -> None:
        await self._idle.wait()


class _Turns:
    """One person's queue: a lock taken in arrival order, and how many hold or wait for it."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.waiting = 0
