"""Post a message once: each post carries its outbox target in `metadata`, and a post that may have gone
already (its answer or its sent mark lost) is looked for in the conversation before it is sent again."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient

from bot.domain.clock import Clock
from bot.slack.ids import MetadataEvent
from bot.slack.outbound.pacing import UpdatePacer
from bot.slack.outbound.webclient import MalformedAnswer
from bot.store import outbox
from bot.store.db import Store
from bot.store.records import OutboxItem

log = logging.getLogger(__name__)

SLACK_TS = re.compile(r"\d+\.\d+")


class Poster:
    def __init__(self, store: Store, client: AsyncWebClient, clock: Clock, pacer: UpdatePacer) -> None:
        self._store = store
        self._client = client
        self._clock = clock
        self._pacer = pacer
        # Targets posted by this process whose sent mark is not written yet: never posted again.
        self._posted: dict[str, str] = {}

    def settled(self, target: str) -> None:
        """The row is sent or set aside: its post need not be remembered any more."""
        self._posted.pop(target, None)

    async def post(
        self,
        item: OutboxItem,
        channel: str,
        thread_ts: str | None,
        text: str,
        blocks: Sequence[Block],
        *,
        broadcast: bool = False,
    ) -> str:
        """Post, unless an earlier attempt already did and only its answer or its sent mark was lost."""
        if item.target in self._posted:
            return self._posted[item.target]
        if item.post_attempted_at is not None:
            found = await self._find_posted(channel, thread_ts, item.target)
            if found:
                return found
        await self._pacer.claim_post(channel)
        async with self._store.write() as session:  # no post without this note: it makes re-sends look first
            await outbox.note_post_attempt(session, item.id, self._clock.now())
        response = await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            reply_broadcast=broadcast or None,
            text=text,
            blocks=blocks,
            metadata={"event_type": MetadataEvent.MESSAGE.value, "event_payload": {"key": item.target}},
        )
        ts = response.get("ts")
        if not isinstance(ts, str) or not SLACK_TS.fullmatch(ts):
            raise MalformedAnswer("chat.postMessage answered without the message's ts")
        self._posted[item.target] = ts
        return ts

    async def _find_posted(self, channel: str, thread_ts: str | None, key: str) -> str | None:
        try:
            if thread_ts:
                response = await self._client.conversations_replies(
                    channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
                )
            else:
                response = await self._client.conversations_history(
                    channel=channel, include_all_metadata=True, limit=100
                )
        except SlackApiError as exc:
            if exc.response.get("error") != "missing_scope":
                raise
            # A DM's history needs im:history, which the app does not ask for: a possible duplicate
            # is better than a message that can never be sent.
            log.warning("cannot look for an earlier post of %s in %s (missing_scope); posting", key, channel)
            return None
        messages: list[dict[str, Any]] = response.get("messages", [])
        for message in messages:
            if _metadata_key(message) == key:
                return str(message["ts"])
        return None


def _metadata_key(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != MetadataEvent.MESSAGE.value:
        return None
    payload = metadata.get("event_payload") or {}
    key = payload.get("key")
    return str(key) if key is not None else None
