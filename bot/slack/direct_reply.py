"""A reply sent straight to a slash command's or click's `response_url`, bypassing the outbox.

Only for when the database cannot take the reply (locked or away): the outbox would lose it, and the
person would wait for an answer that never comes. Slack keeps a response_url valid for 30 minutes.
"""

from __future__ import annotations

import logging

from slack_sdk.webhook.async_client import AsyncWebhookClient

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10


async def reply_now(response_url: str, text: str) -> None:
    response = await AsyncWebhookClient(response_url, timeout=TIMEOUT_SECONDS).send(
        text=text, response_type="ephemeral"
    )
    if response.status_code >= 400:
        log.warning("direct reply answered %s; the person was not told", response.status_code)
