"""Socket Mode: Bolt's handler on the bot's own Web API client, so `apps.connections.open` goes where
SLACK_API_URL points, as every other call does.

slack_sdk's client reconnects by itself: on Slack's `disconnect` it asks for a new URL and moves over;
a connection that dropped silently is noticed by its ping, every `PING_INTERVAL_SECONDS`. Envelopes
whose ack went astray in between come again and are acked, not acted on twice (`Prologue`). An
envelope HTTP would refuse is acked and refused, never left for Slack to send again.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from bot.domain.errors import InfraError
from bot.slack.inbound.inflight import InFlight
from bot.slack.inbound.intake import MAX_BODY_BYTES, payload_problem

log = logging.getLogger(__name__)

PING_INTERVAL_SECONDS = 5.0
"""slack_sdk's own default: a dead connection is replaced within about two of these."""


class _SizedClient(SocketModeClient):
    """An envelope larger than any request Slack sends (what HTTP answers 413) is acked and refused
    before a listener reads it: unacked, Slack would send it again and again."""

    async def run_message_listeners(self, message: dict[str, Any], raw_message: str) -> None:
        envelope_id = message.get("envelope_id")
        if envelope_id and len(raw_message) > MAX_BODY_BYTES:
            log.info(
                "refused a Socket Mode envelope (%.20s) of %s characters: larger than Slack sends",
                message.get("type"),
                len(raw_message),
            )
            await self.send_socket_mode_response(SocketModeResponse(envelope_id=str(envelope_id)))
            return
        await super().run_message_listeners(message, raw_message)


class ScreenedSocketModeHandler(AsyncSocketModeHandler):
    """Bolt's handler, screening each envelope as the intake screens an HTTP request: a payload HTTP
    would answer 400 (malformed, or longer than Slack sends) is acked, logged and not acted on. Each
    envelope counts as being answered (`InFlight.answering`) until its ack is sent."""

    def __init__(self, app: AsyncApp, app_token: str, *, ping_interval: float, inflight: InFlight) -> None:
        # As Bolt's own __init__, with the client above.
        self.app = app
        self._inflight = inflight
        self.app_token = app_token
        self.client = _SizedClient(
            app_token=app_token, logger=app.logger, web_client=app.client, ping_interval=ping_interval
        )
        self.client.socket_mode_request_listeners.append(self.handle)

    async def handle(self, client: AsyncBaseSocketModeClient, req: SocketModeRequest) -> None:
        with self._inflight.answering():
            problem = payload_problem(req.payload)
            if problem is None:
                await super().handle(client, req)  # type: ignore[arg-type]  # Bolt types it on its own client class
                return
            log.info("refused a Socket Mode envelope (%.20s) with a malformed payload: %s", req.type, problem)
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))


async def run_socket_mode(app: AsyncApp, app_token: str, inflight: InFlight) -> None:
    """Runs until serving stops (SIGINT or SIGTERM cancels it), then closes the WebSocket.

    A token Slack refuses ends serving with one line, instead of the client retrying it forever."""
    # Typed as Bolt's handler, whose untyped start and close mypy is told to accept (pyproject.toml).
    handler: AsyncSocketModeHandler = ScreenedSocketModeHandler(
        app, app_token, ping_interval=PING_INTERVAL_SECONDS, inflight=inflight
    )
    try:
        try:
            handler.client.wss_uri = await handler.client.issue_new_wss_url()
        except SlackApiError as exc:
            error = exc.response.get("error", "unknown error")
            raise InfraError(f"Slack refused SLACK_APP_TOKEN for Socket Mode: {error}") from None
        await handler.start_async()
    finally:
        await handler.close_async()
