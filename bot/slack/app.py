"""The Bolt app: a Web API client honouring SLACK_API_URL with retries, and the listeners."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped, warning_token_skipped
from slack_sdk.web.async_client import AsyncWebClient

from bot.services.home import HomeService
from bot.services.replays import ReplayGuard
from bot.settings import Settings
from bot.slack.errors import SLACK_AWAY, describe
from bot.slack.inbound.commands import CommandRouter
from bot.slack.inbound.decisions import DecisionHandler
from bot.slack.inbound.identity import SlackIdentity
from bot.slack.inbound.inflight import InFlight
from bot.slack.inbound.listeners import (
    approval,
    command,
    coverage_clicks,
    home,
    promotion_clicks,
    run_control,
)
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.outbound.direct_reply import dm_now
from bot.slack.outbound.notifier import Notifier
from bot.slack.outbound.webclient import CALL_TIMEOUT_SECONDS, web_client

log = logging.getLogger(__name__)


class _OwnClientNote(logging.Filter):
    """The bot builds the client itself (API URL, retries); Bolt still finds SLACK_BOT_TOKEN in the
    environment and warns at every start that it is unused. That warning is expected, so not shown."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() not in _EXPECTED_NOTES


# Also expected: with the bot's own `authorize` (SlackIdentity), Bolt notes that it uses no token of its own.
_EXPECTED_NOTES = frozenset({warning_client_prioritized_and_token_skipped(), warning_token_skipped()})
_OWN_CLIENT_NOTE = _OwnClientNote()


def create_client(settings: Settings, timeout: float = CALL_TIMEOUT_SECONDS) -> AsyncWebClient:
    """Honours SLACK_API_URL; retries 429 (Retry-After), and 5xx where a repeat cannot double a post;
    every call times out (`bot/slack/outbound/webclient.py`)."""
    return web_client(settings.slack_bot_token.get_secret_value(), settings.slack_api_url, timeout)


def create_app(
    settings: Settings,
    client: AsyncWebClient,
    router: CommandRouter,
    decisions: DecisionHandler,
    notifier: Notifier,
    inflight: InFlight,
    home_service: HomeService,
    control_clicks: run_control.RunControlClicks,
    promoting: promotion_clicks.PromotionClicks,
    covering: coverage_clicks.CoverageClicks,
    replays: ReplayGuard,
    identity: SlackIdentity,
    *,
    socket_mode: bool,
) -> AsyncApp:
    """`socket_mode`: a request Slack sends twice is acted on once (`Prologue`). `identity` authorizes
    requests without a Web API call, so they are acknowledged even when Slack cannot be reached."""
    logging.getLogger("slack_bolt.AsyncApp").addFilter(_OWN_CLIENT_NOTE)  # once: the same filter

    # A plain function: Bolt passes arguments by the parameter names it reads off the callable.
    async def authorize(
        enterprise_id: str | None, team_id: str | None, user_id: str | None
    ) -> AuthorizeResult:
        return await identity.authorize(enterprise_id, team_id, user_id)

    app = AsyncApp(
        client=client,
        signing_secret=settings.slack_signing_secret.get_secret_value(),
        authorize=authorize,
        # Each listener acks and returns, its work going on in a task of its own (`Prologue`), so Bolt
        # answers as the listener returns instead of looking for the ack every 10 ms.
        process_before_response=True,
        # Every HTTP request reaches Bolt through the intake (`bot/server.py`), which has checked its
        # signature and timestamp already; Socket Mode envelopes carry none.
        request_verification_enabled=False,
    )

    async def direct(user_id: str, text: str) -> None:
        await dm_now(client, user_id, text)

    def away_line() -> str | None:
        return SLACK_AWAY if identity.unreachable else None

    listen = Prologue(inflight, notifier, replays, direct, once_per_delivery=socket_mode, away_line=away_line)
    command.register(app, router, listen)
    home.register(app, home_service, listen)
    approval.register(app, decisions, listen)
    run_control.register(app, control_clicks, listen)
    promotion_clicks.register(app, promoting, listen)
    coverage_clicks.register(app, covering, listen)

    @app.error
    async def on_error(error: Exception, body: dict[str, Any]) -> None:
        describe(error)  # logs with a correlation id; the listener already replied where it could

    return app
