"""Recognise a signed click replayed within Slack's five-minute signature window, and ignore it."""

from __future__ import annotations

import logging
from datetime import timedelta

from bot.domain.clock import Clock
from bot.store import interactions
from bot.store.availability import DATABASE_ERRORS, unavailable
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
        key = ":".join(part[:_KEY_PART_CHARS] for part in (user_id, action_id, action_ts))
        now = self._clock.now()
        try:
            async with self._store.write() as session:
                await interactions.forget_before(session, now - KEEP_FOR)
                fresh = await interactions.first_sight(session, key, now)
        except DATABASE_ERRORS as exc:
            if not unavailable(exc):
                raise
            return True
        if not fresh:
            log.warning(
                "replayed click ignored: user=%s action=%s action_ts=%.40s", user_id, action_id, action_ts
            )
        return fresh
