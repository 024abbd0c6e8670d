"""Recognise a signed click or modal submit replayed within Slack's five-minute signature window,
and a request Socket Mode delivered twice, and ignore the second."""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import timedelta
from typing import Any

from bot.domain.clock import Clock
from bot.store import interactions
from bot.store.availability import DATABASE_ERRORS, unavailable
from bot.store.db import Store

log = logging.getLogger(__name__)

# Slack refuses a signature older than five minutes; keys are kept twice that, for clock skew.
KEEP_FOR = timedelta(minutes=10)
_KEY_PART_CHARS = 64


def submission_key(user_id: str, view: dict[str, Any]) -> str:
    """Who submitted which modal (`view.id`), as drawn (`view.hash`: a redrawn modal is a new one), with
    which values: a submit carries no `action_ts`, and the same person may submit the same modal again
    only with other values (a first submit that closes it leaves nothing to submit again).
    """
    state = json.dumps(view.get("state"), sort_keys=True, default=str)  # the values, as submitted
    digest = hashlib.sha256(state.encode()).hexdigest()
    parts = (user_id, "view", str(view.get("id", "")), str(view.get("hash", "")), digest)
    return _key(*parts)


def _key(*parts: str) -> str:
    return ":".join(part[:_KEY_PART_CHARS] for part in parts)


class ReplayGuard:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def first_time(self, user_id: str, action_id: str, action_ts: str) -> bool:
        """False when this user's click on this element at this `action_ts` was handled already.

        A database that cannot answer lets the click through: every state change behind it is a
        guarded transition anyway, and the person gets the busy reply from the handler.
        """
        try:
            fresh = await self._first_sight(_key(user_id, action_id, action_ts))
        except DATABASE_ERRORS as exc:
            if not unavailable(exc):
                raise
            return True
        if not fresh:
            log.warning(
                "replayed click ignored: user=%s action=%s action_ts=%.40s", user_id, action_id, action_ts
            )
        return fresh

    async def first_submission(self, user_id: str, view: dict[str, Any]) -> bool:
        """False when this user's submit of this modal with these values was handled already.

        A database that cannot answer raises, as the submit's own work would a moment later: the
        caller answers "busy" once, without waiting for the database twice.
        """
        fresh = await self._first_sight(submission_key(user_id, view))
        if not fresh:
            log.warning(
                "replayed modal submit ignored: user=%s callback=%.40s view=%.40s",
                user_id,
                view.get("callback_id"),
                view.get("id"),
            )
        return fresh

    async def first_delivery(self, delivery_id: str) -> bool:
        """False when a request with this id (a `trigger_id`, an `event_id`) was acted on already, by
        this process or another: Socket Mode sends an envelope again when its ack went astray.

        A database that cannot answer lets the request through, as for clicks: the work behind it
        meets the same database and answers "busy"."""
        try:
            fresh = await self._first_sight(_key("delivery", delivery_id))
        except DATABASE_ERRORS as exc:
            if not unavailable(exc):
                raise
            return True
        if not fresh:
            log.info("delivery %.60s seen before: acked, not acted on again", delivery_id)
        return fresh

    async def _first_sight(self, key: str) -> bool:
        now = self._clock.now()
        async with self._store.write() as session:
            await interactions.forget_before(session, now - KEEP_FOR)
            return await interactions.first_sight(session, key, now)
