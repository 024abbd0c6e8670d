"""The Bolt app: a Web API client honouring SLACK_API_URL with retries, and the listeners."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.settings import Settings
from bot.slack.commands import CommandRouter
from bot.slack.decisions import DecisionHandler
from bot.slack.errors import describe
from bot.slack.inflight import InFlight
from bot.slack.listeners import approval, command
from bot.slack.notifier import Notifier

log = logging.getLogger(__name__)


def create_client(settings: Settings) -> AsyncWebClient:
    """Retries 429 (honouring Retry-After), 5xx and dropped connections inside each call."""
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=settings.slack_api_url,
        retry_handlers=[
            AsyncRateLimitErrorRetryHandler(max_retry_count=3),
            AsyncServerErrorRetryHandler(max_retry_count=2),
            AsyncConnectionErrorRetryHandler(max_retry_count=2),
        ],
    )


def create_app(
    settings: Settings,
    client: AsyncWebClient,
    router: CommandRouter,
    decisions: DecisionHandler,
    notifier: Notifier,
    inflight: InFlight,
) -> AsyncApp:
    app = AsyncApp(
        client=client,
        signing_secret=settings.slack_signing_secret.get_secret_value(),
    )
    command.register(app, router, notifier, inflight)
    approval.register(app, decisions, notifier, inflight)

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        describe(error)  # logs with a correlation id; the listener already replied where it could

    return app
