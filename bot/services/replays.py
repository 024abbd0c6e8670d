"""Recognise a signed click replayed within Slack's five-minute signature window, and a request Socket
Mode delivered twice, and ignore the second."""

from __future__ import annotations

import logging
from datetime import timedelta

from bot.domain.clock import Clock
from bot.store import interactions
from bot.store.availability import unavailable
from bot.store.db import Store

log = logging.getLogger(__name__)

# Slack refuses a signature older than five minutes; keys are kept twice that, for clock skew.
KEEP_FOR = timedelta(minutes=10)
_KEY_PART_CHARS = 64


class ReplayGuard:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def first_time(self, user_id: str, action_id: str, action_ts: str) -> bool:
        """False when this user's click on this element at this `action_ts` was handled already.

        A database that cannot answer lets the click through: every state change behind it is a
        guarded transition anyway, and the person gets the busy reply from the handler.
        """
        fresh = await self._first_sight((user_id, action_id, action_ts))
        if not fresh:
            log.warning(
                "replayed click ignored: user=%s action=%s action_ts=%.40s", user_id, action_id, action_ts
            )
        return fresh

    async def first_delivery(self, delivery_id: str) -> bool:
        """False when a request with this id (a `trigger_id`, an `event_id`) was acted on already, by
        this process or another: Socket Mode sends an envelope again when its ack went astray."""
        fresh = await self._first_sight(("delivery", delivery_id))
        if not fresh:
            log.info("delivery %.60s seen before: acked, not acted on again", delivery_id)
        return fresh

    async def _first_sight(self, parts: tuple[str, ...]) -> bool:
        key = ":".join(part[:_KEY_PART_CHARS] for part in parts)
        now = self._clock.now()
        try:
            async with self._store.write() as session:
                await interactions.forget_before(session, now - KEEP_FOR)
                return await interactions.first_sight(session, key, now)
        except Exception as exc:
            if not unavailable(exc):
                raise
            return True
