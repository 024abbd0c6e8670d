"""Socket Mode: Bolt's handler on the bot's own Web API client, so `apps.connections.open` goes where
SLACK_API_URL points, as every other call does.

slack_sdk's client reconnects by itself: on Slack's `disconnect` it asks for a new URL and moves over;
a connection that dropped silently is noticed by its ping, every `PING_INTERVAL_SECONDS`. Envelopes
whose ack went astray in between come again and are acked, not acted on twice (`Prologue`).
"""

from __future__ import annotations

import logging

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError

from bot.domain.errors import InfraError

log = logging.getLogger(__name__)

PING_INTERVAL_SECONDS = 5.0
"""slack_sdk's own default: a dead connection is replaced within about two of these."""


async def run_socket_mode(app: AsyncApp, app_token: str) -> None:
    """Runs until serving stops (SIGINT or SIGTERM cancels it), then closes the WebSocket.

    A token Slack refuses ends serving with one line, instead of the client retrying it forever."""
    handler = AsyncSocketModeHandler(app, app_token, ping_interval=PING_INTERVAL_SECONDS)
    try:
        try:
            handler.client.wss_uri = await handler.client.issue_new_wss_url()
        except SlackApiError as exc:
            error = exc.response.get("error", "unknown error")
            raise InfraError(f"Slack refused SLACK_APP_TOKEN for Socket Mode: {error}") from None
        await handler.start_async()
    finally:
        await handler.close_async()
