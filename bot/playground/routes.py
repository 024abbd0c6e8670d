"""The playground's own HTTP routes: act as a user (signed requests to the bot) and read the stand-in.

`POST /playground/command {user, text, channel?}` types a slash command, `POST /playground/click
{user, channel?, ts, label}` clicks a button, `GET /playground/state` returns channels, messages,
ephemerals and homes as JSON.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from bot.playground.driver import ButtonNotFound, SlackDriver
from bot.playground.standin import SlackStandin
from bot.playground.users import CAST
from bot.settings import Settings

DEFAULT_CHANNEL = "C0PLAY"


class PlaygroundRoutes:
    def __init__(self, standin: SlackStandin, settings: Settings, base_url: str) -> None:
        self._standin = standin
        self._driver = SlackDriver(
            f"{base_url}/slack/events", settings.slack_signing_secret.get_secret_value(), standin, base_url
        )

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/playground/command", self._command)
        app.router.add_post("/playground/click", self._click)
        app.router.add_get("/playground/state", self._state)
        app.cleanup_ctx.append(self._driver_session)

    async def _driver_session(self, _app: web.Application) -> AsyncIterator[None]:
        async with self._driver:
            yield

    async def _command(self, request: web.Request) -> web.Response:
        body = await _json(request)
        response = await self._driver.slash_command(
            str(body.get("user", CAST[0].id)),
            str(body.get("text", "")),
            str(body.get("channel", DEFAULT_CHANNEL)),
        )
        return web.json_response({"status": response.status, "ack": response.json or response.body_text})

    async def _click(self, request: web.Request) -> web.Response:
        body = await _json(request)
        try:
            response = await self._driver.click_button(
                str(body["user"]),
                str(body.get("channel", DEFAULT_CHANNEL)),
                str(body["ts"]),
                str(body["label"]),
            )
        except (KeyError, ButtonNotFound, LookupError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"status": response.status})

    async def _state(self, _request: web.Request) -> web.Response:
        standin = self._standin
        channels = {ch.id: standin.messages(ch.id) for ch in standin.workspace.channels()}
        return web.json_response(
            {
                "users": [{"id": u.id, "name": u.name} for u in CAST],
                "channels": channels,
                "ephemerals": standin.ephemerals(),
            }
        )


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise web.HTTPBadRequest(text="expected a JSON body") from exc
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="expected a JSON object")
    return body
