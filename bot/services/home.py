"""App Home: remember who looks at it, and queue the republish of their tab."""

from __future__ import annotations

from bot.domain import outbox_keys
from bot.domain.clock import Clock
from bot.store import homes, outbox
from bot.store.db import Store
from bot.store.records import OutboxKind


class HomeService:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def opened(self, user_id: str) -> None:
        now = self._clock.now()
        async with self._store.write() as session:
            await homes.add_viewer(session, user_id, now)
            await outbox.enqueue(session, kind=OutboxKind.HOME, target=outbox_keys.home(user_id), now=now)
