"""Replies that bypass the outbox: to a slash command's or click's `response_url`, or to a person's DM.

Only for when the database cannot take the reply (locked or away): the outbox would lose it, and the
person would wait for an answer that never comes. Slack keeps a response_url valid for 30 minutes; a
modal's submit has none, so its answer goes to the submitter's DM with the app.
"""

from __future__ import annotations

import logging

from aiohttp import ClientError
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10


async def reply_now(response_url: str, text: str) -> None:
    response = await AsyncWebhookClient(response_url, timeout=TIMEOUT_SECONDS).send(
        text=text, response_type="ephemeral"
    )
    if response.status_code >= 400:
        log.warning("direct reply answered %s; the person was not told", response.status_code)


async def dm_now(client: AsyncWebClient, user_id: str, text: str) -> None:
    """`text` in the DM `conversations.open` gives (scope im:write), as the outbox's DMs go."""
    try:
        opened = await client.conversations_open(users=user_id)
        channel = (opened.get("channel") or {}).get("id")
        if not isinstance(channel, str) or not channel:
            raise SlackClientError("conversations.open answered without the DM's channel id")
        await client.chat_postMessage(channel=channel, text=text)
    except (SlackApiError, SlackClientError, ClientError, OSError, TimeoutError) as exc:
        log.warning("direct DM to %s failed (%s); the person was not told", user_id, type(exc).__name__)
