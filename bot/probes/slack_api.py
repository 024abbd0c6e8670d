"""Slack's Web API with the bot token: `auth.test` names the team and the bot user, and its
`x-oauth-scopes` header the scopes the token was granted, so a scope the manifest asks for and the
app was not (re)installed with is named before a card fails to post. With SLACK_APP_TOKEN, that Slack
hands out a Socket Mode URL (`apps.connections.open`); the WebSocket itself is not opened."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.slack.outbound.webclient import web_client
from bot.slack.scopes import BOT_SCOPES, GRANTED_SCOPES_HEADER

CALL_TIMEOUT_SEC = 8.0


@dataclass(frozen=True)
class SlackProbe:
    name: str = "slack"
    timeout_sec: float = 20.0

    async def run(self, context: ProbeContext) -> list[Line]:
        settings = context.settings
        if settings is None or "SLACK_BOT_TOKEN" in context.unusable:
            return [note("Slack not tried: SLACK_BOT_TOKEN is not usable")]
        client = web_client(
            settings.slack_bot_token.get_secret_value(), settings.slack_api_url, CALL_TIMEOUT_SEC
        )
        try:
            lines = await _auth_test(client, settings.slack_api_url)
            if settings.slack_app_token is None:
                lines.append(
                    note("serve will use HTTP: SLACK_APP_TOKEN is unset, so Slack posts to /slack/events")
                )
            else:
                lines.append(await _socket_mode(client, settings.slack_app_token.get_secret_value()))
            return lines
        finally:
            await client.close()


async def _auth_test(client: AsyncWebClient, api_url: str) -> list[Line]:
    try:
        answer = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error", "unknown error")
        return [fail(f"Slack refuses SLACK_BOT_TOKEN: auth.test answered {error}")]
    except (SlackClientError, OSError, TimeoutError) as exc:
        return [fail(f"Slack's Web API at {api_url} cannot be reached: {_reason(exc)}")]
    lines = [
        ok(f"Slack: team {answer.get('team')} ({answer.get('team_id')}), bot user @{answer.get('user')}")
    ]
    granted_header = _header(answer.headers, GRANTED_SCOPES_HEADER)
    if granted_header is None:
        lines.append(note("Slack named no granted scopes (no x-oauth-scopes header): scopes not checked"))
        return lines
    granted = {scope.strip() for scope in granted_header.split(",") if scope.strip()}
    lacking = [scope for scope in BOT_SCOPES if scope not in granted]
    if lacking:
        lines.append(
            fail(
                f"the bot token lacks scope(s) manifest.yml asks for: {', '.join(lacking)} "
                "(add them under OAuth & Permissions and reinstall the app)"
            )
        )
    else:
        lines.append(ok("the bot token has every scope manifest.yml asks for"))
    return lines


async def _socket_mode(client: AsyncWebClient, app_token: str) -> Line:
    try:
        await client.apps_connections_open(app_token=app_token)
    except SlackApiError as exc:
        error = exc.response.get("error", "unknown error")
        return fail(f"Slack refuses SLACK_APP_TOKEN for Socket Mode: apps.connections.open answered {error}")
    except (SlackClientError, OSError, TimeoutError) as exc:
        return fail(f"Socket Mode not checked: apps.connections.open failed: {_reason(exc)}")
    return ok(
        "serve will use Socket Mode: Slack hands out a connection for SLACK_APP_TOKEN (no public URL needed)"
    )


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """Header names are case-insensitive, whichever mapping slack_sdk hands over."""
    if not headers:
        return None
    return next((str(value) for key, value in headers.items() if str(key).lower() == name), None)


def _reason(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200] or type(exc).__name__
