"""The playground's own HTTP routes: the page, its live feed, and acting as a user.

`GET /` serves the page (plain files from `static/`, no build step), `GET /playground/events` streams
every visible change of the stand-in as server-sent events, and `GET /playground/state` returns
channels, threads, ephemerals, open modals (per user) and home tabs as JSON.

Acting as a user sends requests to the bot signed exactly as Slack signs them:
`POST /playground/command {user, text, channel?}` types a slash command;
`POST /playground/click {user, channel?, ts, label}` clicks a button by its visible label, and
`{user, channel?, ts | view_id, action: {type, action_id, block_id, value?, selected_option?, ...}}`
uses any element of a message, modal or home tab (buttons, selects);
`POST /playground/view_submit {user, view_id, values}` submits a modal (`values` as Slack's
`state.values`); `POST /playground/home_opened {user}` opens the App Home tab.
`POST /playground/view_close {user, view_id}` and `POST /playground/message {user, channel, text}` only
change the stand-in, as a person closing a modal or typing a message would.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.playground.api_error import ApiError
from bot.playground.driver import ButtonNotFound, DriverResponse, SlackDriver
from bot.playground.payloads import VERIFICATION_TOKEN, AppContext, Button, block_actions_payload
from bot.playground.standin import SlackStandin
from bot.playground.users import ADMIN, APPROVER, CAST, OUTSIDER, REQUESTER, bot_user
from bot.settings import Settings

DEFAULT_CHANNEL = "C0PLAY"
STATIC_DIR = Path(__file__).with_name("static")
HEARTBEAT_SECONDS = 15.0
POLL_SECONDS = 1.0  # how soon a closed page is noticed (and its queue dropped) when nothing happens
ROLES = {REQUESTER: "requester", APPROVER: "approver", ADMIN: "admin", OUTSIDER: "outsider"}
# What the page may say about an element it used; everything else of the payload comes from stored state.
_ACTION_KEYS = (
    "type",
    "action_id",
    "block_id",
    "value",
    "text",
    "style",
    "selected_option",
    "selected_options",
    "selected_user",
    "selected_channel",
    "selected_conversation",
    "selected_date",
)
_CLOSE_STREAM: dict[str, Any] = {"kind": "closing"}


class PlaygroundRoutes:
    def __init__(
        self, standin: SlackStandin, settings: Settings, base_url: str, *, socket_mode: bool = False
    ) -> None:
        """`socket_mode`: what people do reaches the bot as envelopes on its WebSocket, not as HTTP."""
        self._standin = standin
        self._socket_mode = socket_mode
        self._driver = SlackDriver(
            f"{base_url}/slack/events",
            settings.slack_signing_secret.get_secret_value(),
            standin,
            base_url,
            socket_mode=socket_mode,
        )
        self._streams: set[asyncio.Queue[dict[str, Any]]] = set()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/", self._page)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/playground/events", self._events)
        app.router.add_get("/playground/state", self._state)
        app.router.add_get("/playground/files/{file_id}", self._file)
        app.router.add_post("/playground/command", self._command)
        app.router.add_post("/playground/click", self._click)
        app.router.add_post("/playground/view_submit", self._view_submit)
        app.router.add_post("/playground/view_close", self._view_close)
        app.router.add_post("/playground/home_opened", self._home_opened)
        app.router.add_post("/playground/message", self._message)
        app.cleanup_ctx.append(self._driver_session)
        app.on_shutdown.append(self._close_streams)

    async def _driver_session(self, _app: web.Application) -> AsyncIterator[None]:
        async with self._driver:
            yield

    # -- the page -------------------------------------------------------------------------------------

    async def _page(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    async def _static(self, request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        path = STATIC_DIR / name
        if name.startswith(".") or path.resolve().parent != STATIC_DIR.resolve() or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path, headers={"Cache-Control": "no-cache"})

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events, one per visible change; a heartbeat comment keeps idle proxies open."""
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        queue = self._standin.subscribe()
        self._streams.add(queue)
        try:
            await response.write(b"retry: 1000\n: connected\n\n")
            idle = 0.0
            while not _gone(request):
                try:
                    event = await asyncio.wait_for(queue.get(), POLL_SECONDS)
                except TimeoutError:
                    idle += POLL_SECONDS
                    if idle >= HEARTBEAT_SECONDS:
                        await response.write(b": heartbeat\n\n")
                        idle = 0.0
                    continue
                if event is _CLOSE_STREAM:
                    break
                data = json.dumps(event, separators=(",", ":"))
                await response.write(f"event: {event['kind']}\ndata: {data}\n\n".encode())
                idle = 0.0
        except ConnectionResetError:
            pass  # the page was closed or reloaded mid-write
        finally:
            self._standin.unsubscribe(queue)
            self._streams.discard(queue)
        return response

    async def _close_streams(self, _app: web.Application) -> None:
        """Open streams would otherwise hold shutdown until the server's timeout."""
        for queue in list(self._streams):
            queue.put_nowait(_CLOSE_STREAM)

    async def _state(self, _request: web.Request) -> web.Response:
        standin = self._standin
        bot = bot_user(standin.bot_user_id)
        return web.json_response(
            {
                "team": {"id": standin.team_id, "domain": standin.team_domain},
                "transport": {
                    "mode": "socket" if self._socket_mode else "http",
                    "connections": len(standin.socket_mode.connections),
                },
                "bot": {"id": bot.id, "name": bot.name, "real_name": bot.real_name},
                "users": [
                    {"id": u.id, "name": u.name, "real_name": u.real_name, "role": ROLES.get(u.id, "")}
                    for u in CAST
                ],
                **self._conversations(),
                "ephemerals": standin.ephemerals(),
                "files": self._files(),
                **self._surfaces(),
            }
        )

    def _conversations(self) -> dict[str, Any]:
        """Channels, their top-level messages (`channels`, as before the page) and every thread."""
        standin = self._standin
        channels = standin.workspace.channels()
        messages = {ch.id: standin.messages(ch.id) for ch in channels}
        threads = {
            ch.id: {m["ts"]: standin.thread(ch.id, m["ts"]) for m in messages[ch.id] if m.get("reply_count")}
            for ch in channels
        }
        listing = [
            {"id": ch.id, "name": ch.name, "bot_member": ch.bot_member, "dm_user": ch.dm_user}
            for ch in channels
        ]
        return {"channel_list": listing, "channels": messages, "threads": threads}

    def _files(self) -> list[dict[str, Any]]:
        """Files shared in a channel or thread, as the page shows them (images inline, with alt text)."""
        return [
            {
                "id": f.id,
                "name": f.filename,
                "title": f.title,
                "alt": f.extra.get("alt_txt", ""),
                "channel": f.channel,
                "thread_ts": f.thread_ts,
                "image": f.filename.lower().endswith(".png"),
                "url": f"/playground/files/{f.id}",
            }
            for f in self._standin.files.shared()
        ]

    async def _file(self, request: web.Request) -> web.Response:
        stored = self._standin.files.files.get(request.match_info["file_id"])
        if stored is None or not stored.shared or stored.content is None:
            raise web.HTTPNotFound()
        kind = "image/png" if stored.filename.lower().endswith(".png") else "text/plain"
        return web.Response(body=stored.content, content_type=kind, headers={"Cache-Control": "no-cache"})

    def _surfaces(self) -> dict[str, Any]:
        """Open modals by the user whose screen they are on, and published home tabs by user."""
        standin = self._standin
        views: dict[str, list[dict[str, Any]]] = {}
        for view_id, view in standin.views.items():
            views.setdefault(standin.surfaces.owner(view_id) or "", []).append(view)
        homes = {u.id: home for u in CAST if (home := standin.home(u.id)) is not None}
        return {"views": views, "homes": homes}

    # -- acting as a user -----------------------------------------------------------------------------

    async def _command(self, request: web.Request) -> web.Response:
        body = await _json(request)
        try:
            response = await self._driver.slash_command(
                str(body.get("user", CAST[0].id)),
                str(body.get("text", "")),
                str(body.get("channel", DEFAULT_CHANNEL)),
            )
        except ApiError as exc:
            return web.json_response({"error": exc.error}, status=400)
        return _answer(response)

    async def _click(self, request: web.Request) -> web.Response:
        body = await _json(request)
        try:
            user, channel = str(body["user"]), str(body.get("channel", DEFAULT_CHANNEL))
            if body.get("ephemeral"):
                text = (body["action"].get("text") or {}).get("text", "")
                response = await self._driver.click_ephemeral_button(user, str(text), ts=str(body["ts"]))
            elif "label" in body:
                response = await self._driver.click_button(user, channel, str(body["ts"]), str(body["label"]))
            else:
                action = {k: body["action"][k] for k in _ACTION_KEYS if k in body["action"]}
                response = await self._use_element(user, channel, body, action)
        except (KeyError, TypeError, ButtonNotFound, LookupError, ApiError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"status": response.status})

    async def _use_element(
        self, user: str, channel: str, body: dict[str, Any], action: dict[str, Any]
    ) -> DriverResponse:
        """A button on a message goes through the driver, which takes its text and value from the card;
        selects, and elements of modals and home tabs, are sent as built here from the stored surface."""
        if "view_id" in body:
            return await self._send(self._view_action(user, str(body["view_id"]), action))
        ts = str(body["ts"])
        if action.get("type") == "button":
            return await self._driver.click(
                user, channel, ts, str(action["action_id"]), action.get("value"), action.get("block_id")
            )
        return await self._send(self._message_action(user, channel, ts, action))

    def _message_action(self, user: str, channel: str, ts: str, action: dict[str, Any]) -> dict[str, Any]:
        message = self._standin.message(channel, ts)
        if message is None:
            raise LookupError(f"no message {ts} in {channel}")
        element = Button(str(action.get("block_id", "")), str(action["action_id"]), text="", value=None)
        payload = block_actions_payload(
            self._app_context(),
            self._standin.user(user),
            self._standin.channel(channel),
            message,
            element,
            self._standin.response_url(channel, user, ts),
            self._standin.issue_trigger_id(user),
            _action_ts(),
        )
        payload["actions"] = [{**action, "action_ts": _action_ts()}]
        return payload

    def _view_action(self, user_id: str, view_id: str, action: dict[str, Any]) -> dict[str, Any]:
        """`block_actions` from a modal or home tab: the container is the view, and there is no channel."""
        view = self._standin.view(view_id)
        if view is None:
            raise LookupError(f"no open view {view_id}")
        return {
            **self._view_payload("block_actions", user_id, view),
            "container": {"type": "view", "view_id": view["id"]},
            "trigger_id": self._standin.issue_trigger_id(user_id),
            "actions": [{**action, "action_ts": _action_ts()}],
        }

    def _view_payload(self, kind: str, user_id: str, view: dict[str, Any]) -> dict[str, Any]:
        user = self._standin.user(user_id)
        team = {"id": self._standin.team_id, "domain": self._standin.team_domain}
        return {
            "type": kind,
            "user": {"id": user.id, "username": user.name, "name": user.name, "team_id": team["id"]},
            "api_app_id": self._standin.bot.app_id,
            "token": VERIFICATION_TOKEN,
            "team": team,
            "enterprise": None,
            "is_enterprise_install": False,
            "view": view,
        }

    async def _view_submit(self, request: web.Request) -> web.Response:
        body = await _json(request)
        values = body.get("values", {})
        if not isinstance(values, dict):
            return web.json_response({"error": "values must be an object (Slack's state.values)"}, status=400)
        try:
            response = await self._driver.submit_view(str(body["user"]), str(body["view_id"]), values)
        except (KeyError, LookupError, ApiError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return _answer(response)

    async def _view_close(self, request: web.Request) -> web.Response:
        """Cancel or ×: the modal goes; the bot hears `view_closed` only if it asked (`notify_on_close`)."""
        body = await _json(request)
        view_id, user = str(body.get("view_id", "")), str(body.get("user", ""))
        view = self._standin.views.get(view_id)
        self._standin.close_view(view_id)
        if view is None or not view.get("notify_on_close"):
            return web.json_response({"ok": True})
        try:
            closed = {**self._view_payload("view_closed", user, view), "is_cleared": False}
        except ApiError as exc:
            return web.json_response({"error": exc.error}, status=400)
        response = await self._send(closed)
        return web.json_response({"ok": True, "status": response.status})

    async def _home_opened(self, request: web.Request) -> web.Response:
        body = await _json(request)
        try:
            user = self._standin.user(str(body.get("user", CAST[0].id))).id
        except ApiError as exc:
            return web.json_response({"error": exc.error}, status=400)
        response = await self._driver.app_home_opened(user)
        return web.json_response({"status": response.status, "home": self._standin.home(user)})

    async def _message(self, request: web.Request) -> web.Response:
        body = await _json(request)
        try:
            message = self._standin.post_user_message(
                str(body.get("channel", DEFAULT_CHANNEL)),
                self._standin.user(str(body.get("user", CAST[0].id))).id,
                str(body.get("text", "")),
                str(body["thread_ts"]) if body.get("thread_ts") else None,
            )
        except ApiError as exc:
            return web.json_response({"error": exc.error}, status=400)
        return web.json_response({"ok": True, "message": message})

    # -- helpers --------------------------------------------------------------------------------------

    async def _send(self, payload: dict[str, Any]) -> DriverResponse:
        return await self._driver.interaction(payload)

    def _app_context(self) -> AppContext:
        standin = self._standin
        return AppContext(
            team_id=standin.team_id,
            team_domain=standin.team_domain,
            app_id=standin.bot.app_id,
            bot_user_id=standin.bot_user_id,
        )


def _answer(response: DriverResponse) -> web.Response:
    """The bot's HTTP status and ack body: a slash command's immediate reply, a modal's `errors`."""
    return web.json_response({"status": response.status, "ack": response.json or response.body_text})


def _gone(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _action_ts() -> str:
    return f"{time.time():.6f}"


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise web.HTTPBadRequest(text="expected a JSON body") from exc
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="expected a JSON object")
    return body
