"""Deliver the outbox to Slack: post once, then edit in place; retry what failed, never post twice.

Each posted message carries its outbox target in `metadata`, so when Slack may have stored a post
whose answer we lost (5xx, timeout), the next attempt looks for it in the channel before posting.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.domain.clock import Clock
from bot.settings import NotifierConfig
from bot.slack import render
from bot.slack.ids import MetadataEvent
from bot.slack.views import (
    approval_card,
    card_fallback_text,
    status_fallback_text,
    status_message,
    summary_fallback_text,
    summary_message,
)
from bot.store import outbox, requests, runs
from bot.store.db import Store
from bot.store.models import OutboxItem, OutboxKind

log = logging.getLogger(__name__)

# Slack errors that no retry can fix; the row is given up and, for a card, the requester is told why.
PERMANENT_ERRORS = frozenset(
    {
        "not_in_channel",
        "channel_not_found",
        "is_archived",
        "invalid_blocks",
        "msg_too_long",
        "invalid_auth",
        "account_inactive",
        "message_not_found",
        "cant_update_message",
    }
)
NOT_IN_CHANNEL_TEXT = (
    "I'm not in this channel, so I can't post the approval card here. "
    "Invite me with `/invite @csb` and run the command again."
)


class _NotReady(Exception):
    """The message this row threads under has not been posted yet; try again shortly."""


class Notifier:
    def __init__(
        self,
        store: Store,
        client: AsyncWebClient,
        clock: Clock,
        config: NotifierConfig,
        *,
        eager: bool = True,
    ) -> None:
        self._store = store
        self._client = client
        self._clock = clock
        self._config = config
        self._eager = eager
        self._lock = asyncio.Lock()
        self._kicked: asyncio.Task[int] | None = None

    def kick(self) -> None:
        """Deliver now instead of at the next tick, so a reply does not wait for the timer.

        Off (`eager=False`) in tests, which call `deliver()` themselves and see every call in order.
        """
        if not self._eager or (self._kicked is not None and not self._kicked.done()):
            return
        self._kicked = asyncio.create_task(self.deliver())

    async def deliver(self) -> int:
        """Send every due row in order; returns how many were sent."""
        async with self._lock:
            async with self._store.read() as session:
                items = await outbox.due(session, self._clock.now())
            sent = 0
            for item in items:
                sent += await self._deliver_one(item)
            return sent

    async def _deliver_one(self, item: OutboxItem) -> int:
        assert item.id is not None
        try:
            await self._send(item)
        except _NotReady:
            await self._retry_later(item, "waiting for the card to be posted", count=False)
            return 0
        except SlackApiError as exc:
            await self._failed(item, str(exc.response.get("error", "unknown_error")))
            return 0
        except (aiohttp.ClientError, TimeoutError) as exc:
            await self._failed(item, f"{type(exc).__name__}: {exc}")
            return 0
        async with self._store.write() as session:
            await outbox.mark_sent(session, item.id, self._clock.now())
        return 1

    async def _send(self, item: OutboxItem) -> None:
        if item.kind is OutboxKind.CARD:
            await self._send_card(item)
        elif item.kind is OutboxKind.EPHEMERAL:
            await self._send_ephemeral(item)
        else:
            await self._send_run_message(item)

    async def _send_card(self, item: OutboxItem) -> None:
        assert item.request_id is not None
        async with self._store.read() as session:
            loaded = await render.load_card(session, item.request_id)
        if loaded is None:
            return
        request, view = loaded
        blocks, text = approval_card(view), card_fallback_text(view)
        if request.card_ts:
            await self._client.chat_update(
                channel=request.channel_id, ts=request.card_ts, text=text, blocks=blocks
            )
            return
        ts = await self._post(item, request.channel_id, None, text, blocks)
        async with self._store.write() as session:
            await requests.set_card_ts(session, item.request_id, ts)

    async def _send_run_message(self, item: OutboxItem) -> None:
        assert item.run_id is not None
        async with self._store.read() as session:
            loaded = await render.load_run(session, item.run_id)
        if loaded is None:
            return
        run, request, view = loaded
        if not request.card_ts:
            raise _NotReady
        if item.kind is OutboxKind.SUMMARY:
            await self._post(
                item, request.channel_id, request.card_ts, summary_fallback_text(view), summary_message(view)
            )
            return
        blocks, text = status_message(view), status_fallback_text(view)
        if run.status_ts:
            await self._client.chat_update(
                channel=request.channel_id, ts=run.status_ts, text=text, blocks=blocks
            )
            return
        ts = await self._post(item, request.channel_id, request.card_ts, text, blocks)
        async with self._store.write() as session:
            await runs.set_status_ts(session, item.run_id, ts)

    async def _post(
        self, item: OutboxItem, channel: str, thread_ts: str | None, text: str, blocks: Sequence[Block]
    ) -> str:
        """Post, unless an earlier attempt already did and only its answer was lost."""
        if item.attempts:
            found = await self._find_posted(channel, thread_ts, item.target)
            if found:
                return found
        response = await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            blocks=blocks,
            metadata={"event_type": MetadataEvent.MESSAGE.value, "event_payload": {"key": item.target}},
        )
        return str(response["ts"])

    async def _find_posted(self, channel: str, thread_ts: str | None, key: str) -> str | None:
        if thread_ts:
            response = await self._client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
            )
        else:
            response = await self._client.conversations_history(
                channel=channel, include_all_metadata=True, limit=100
            )
        for message in response.get("messages", []):
            if _metadata_key(message) == key:
                return str(message["ts"])
        return None

    async def _send_ephemeral(self, item: OutboxItem) -> None:
        assert item.request_id is not None or item.text is not None
        url = await self._response_url(item)
        if url is None:
            log.warning("ephemeral reply %s has no response_url; dropped", item.id)
            return
        response = await AsyncWebhookClient(url).send(text=item.text or "", response_type="ephemeral")
        if response.status_code >= 500 or response.status_code == 429:
            raise aiohttp.ClientError(f"response_url answered {response.status_code}")

    async def _response_url(self, item: OutboxItem) -> str | None:
        if item.response_url:
            return item.response_url
        if item.request_id is None:
            return None
        async with self._store.read() as session:
            request = await requests.get_request(session, item.request_id)
        return request.response_url if request else None

    async def _failed(self, item: OutboxItem, error: str) -> None:
        assert item.id is not None
        permanent = error in PERMANENT_ERRORS
        if permanent or item.attempts + 1 >= self._config.max_attempts:
            log.warning("outbox %s (%s) given up: %s", item.id, item.target, error)
            async with self._store.write() as session:
                await outbox.mark_dead(session, item.id, error)
                if error == "not_in_channel" and item.kind is OutboxKind.CARD:
                    await outbox.enqueue(
                        session,
                        kind=OutboxKind.EPHEMERAL,
                        target=f"ephemeral:{item.target}:not_in_channel",
                        now=self._clock.now(),
                        request_id=item.request_id,
                        text=NOT_IN_CHANNEL_TEXT,
                    )
            return
        await self._retry_later(item, error, count=True)

    async def _retry_later(self, item: OutboxItem, error: str, *, count: bool) -> None:
        assert item.id is not None
        attempts = item.attempts + 1 if count else item.attempts
        until = self._clock.now() + outbox.backoff(max(attempts, 1))
        async with self._store.write() as session:
            await outbox.postpone(session, item.id, attempts=attempts, until=until, error=error)


def _metadata_key(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != MetadataEvent.MESSAGE.value:
        return None
    payload = metadata.get("event_payload") or {}
    key = payload.get("key")
    return str(key) if key is not None else None
