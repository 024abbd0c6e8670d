"""How often the bot may edit a message or post in a channel: one `chat.update` per card per interval,
within one budget for the whole deployment.

`chat.update` is tier 3 (about 50 a minute per workspace), so a 264-task run finishing lanes every
second must not edit its card every second. The outbox coalesces (one pending row per message); this
decides when that row may go, reading the injected clock. The budgets live in the database
(`bot/store/pacing.py`), not in this process: the process that takes the timers over from another (a
deploy, a crash) goes on from where its predecessor's edits left the budget, not from a fresh one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta

from bot.domain.clock import Clock
from bot.store import pacing
from bot.store.db import Store
from bot.store.pacing import Budget


class UpdatePacer:
    def __init__(
        self, store: Store, clock: Clock, interval: timedelta, per_minute: int, post_interval: timedelta
    ) -> None:
        self._store = store
        self._clock = clock
        self._edits = Budget("chat.update", interval, per_minute)
        self._posts = Budget("chat.postMessage", post_interval)

    @asynccontextmanager
    async def edit(self, message: str, why: str) -> AsyncIterator[None]:
        """Around one edit of `message` (or App Home publish): raises `Wait` when the budget does not
        allow it now. The edit counts from when Slack answered (rendering and the call can take a while
        under load); one that failed gives its place in the budget back."""
        reserved = self._clock.now()
        async with self._store.write() as session:
            wait = await pacing.reserve(session, self._edits, message, reserved)
        if wait is not None:
            raise Wait(wait, why)
        made = False
        try:
            yield
            made = True
        finally:  # the failure itself is the caller's to handle: this only settles the budget
            async with self._store.write() as session:
                if made:
                    await pacing.restamp(session, self._edits, message, reserved, self._clock.now())
                else:
                    await pacing.release(session, self._edits, message, reserved)

    async def claim_post(self, channel: str) -> None:
        """Before a chat.postMessage: about one per second per channel, as Slack asks; raises `Wait`."""
        async with self._store.write() as session:
            wait = await pacing.reserve(session, self._posts, channel, self._clock.now())
        if wait is not None:
            raise Wait(wait, "posts paced per channel")


class Wait(Exception):
    """Not now, and not a failure: a thread parent not posted yet, or an edit paced for later.

    Without `until`, the row waits with backoff: what it waits for may take long, or never come.
    """

    def __init__(self, until: datetime | None, why: str) -> None:
        super().__init__(why)
        self.until = until
