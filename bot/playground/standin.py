"""A local Slack: the Web API methods the bot calls, answered from memory, over real HTTP.

The bot's `AsyncWebClient` points its `base_url` at `http://127.0.0.1:<port>/api/` and cannot tell
the difference for the methods it uses: same encodings, same `{"ok": false, "error": ...}` answers
with HTTP 200, same Block Kit limits, same 429 with `Retry-After`. Everything the bot does is recorded
so tests can assert on it, and failures can be queued to rehearse Slack's bad days.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable
from json import JSONDecodeError
from typing import Any

from aiohttp import web

from bot.playground.api_args import Args
from bot.playground.api_context import ApiContext
from bot.playground.api_error import ApiError
from bot.playground.change_feed import EventHub
from bot.playground.files_store import FileStore
from bot.playground.methods import METHODS
from bot.playground.recording import FailurePlan, Hold, HoldPlan, InjectedFailure, RecordedCall
from bot.playground.response_urls import ResponseUrls, apply_response
from bot.playground.socket_mode import CONNECTIONS_OPEN, SocketModeServer
from bot.playground.surfaces import Surfaces
from bot.playground.users import CAST, PlayUser
from bot.playground.workspace import DEFAULT_CHANNELS, BotIdentity, Channel, SlackTs, Workspace
from bot.slack.scopes import BOT_SCOPES, GRANTED_SCOPES_HEADER


class SlackStandin:
    """The playground team's Slack, held in memory; serve it with `build_app()`."""

    def __init__(
        self,
        bot_token: str,
        team_id: str = "T0PLAY",
        bot_user_id: str = "UCSBBOT",
        channels: Iterable[Channel] = DEFAULT_CHANNELS,
        *,
        users: Iterable[PlayUser] = CAST,
        bot_id: str = "B0CSBBOT",
        app_id: str = "A0CSBBOT",
        team_domain: str = "csb-playground",
        base_url: str | None = None,
        time_fn: Callable[[], float] = time.time,
        app_token: str | None = None,
        scopes: Iterable[str] = BOT_SCOPES,
    ) -> None:
        self.bot_token = bot_token
        self.scopes = tuple(scopes)
        """The bot token's granted scopes, named in every answer to a call made with it, as Slack does."""
        self.team_domain = team_domain
        self.base_url = base_url
        """Where this stand-in is served (no trailing slash); needed only to build response URLs."""
        self.bot = BotIdentity(team_id=team_id, user_id=bot_user_id, bot_id=bot_id, app_id=app_id)
        self.calls: list[RecordedCall] = []
        self._time_fn = time_fn
        self._hub = EventHub()
        self._users = {u.id: u for u in users}
        self.workspace = Workspace(self.bot, tuple(channels), SlackTs(time_fn), self._hub)
        self.surfaces = Surfaces(self.bot, self._hub)
        self.files = FileStore(
            lambda: self.base_url,
            lambda f: self._hub.publish("file_shared", id=f.id, channel=f.channel, thread_ts=f.thread_ts),
        )
        self._ctx = ApiContext(self.workspace, self.surfaces, self._users, self.files)
        self._failures = FailurePlan()
        self._holds = HoldPlan()
        self._responses = ResponseUrls()
        self.socket_mode = SocketModeServer(app_id)
        """Socket Mode for the app, on once `app_token` is set (the `xapp-` token it accepts)."""
        self.socket_mode.app_token = app_token

    @property
    def team_id(self) -> str:
        return self.bot.team_id

    @property
    def bot_user_id(self) -> str:
        return self.bot.user_id

    # -- serving --------------------------------------------------------------------------------------

    def build_app(self) -> web.Application:
        """A fresh aiohttp app over this state (an app can be run only once; the state can be reused)."""
        app = web.Application()
        self.add_routes(app.router)
        return app

    def add_routes(self, router: web.UrlDispatcher) -> None:
        """Serve the Web API beside other routes (the playground serves the bot and its page on one port)."""
        router.add_route("GET", "/api/{method}", self._handle_api)
        router.add_route("POST", "/api/{method}", self._handle_api)
        router.add_post("/response/{token}", self._handle_response_url)
        router.add_post("/upload/{file_id}", self._handle_upload)
        self.socket_mode.add_routes(router)

    async def _handle_upload(self, request: web.Request) -> web.Response:
        """The upload URL `files.getUploadURLExternal` hands out: it takes the file's bytes."""
        if not self.files.receive(request.match_info["file_id"], await request.read()):
            return web.Response(status=404, text="file_not_found")
        return web.Response(text="OK - uploaded")

    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        try:
            values, token = await _read_call(request)
        except ApiError as exc:
            return self._answer(method, {}, exc.to_body())
        if method not in METHODS and method != CONNECTIONS_OPEN:
            return self._answer(method, values, ApiError("unknown_method").to_body())
        hold = self._holds.take(method, values.get("channel"))
        if hold is not None:
            # Shielded: a caller that gives up (its timeout) does not stop Slack from doing the work.
            return await asyncio.shield(self._held(hold, method, values, token))
        return self._respond(method, values, token)

    async def _held(self, hold: Hold, method: str, values: dict[str, Any], token: str | None) -> web.Response:
        hold.arrived.set()
        await hold.released.wait()
        return self._respond(method, values, token)

    def _respond(self, method: str, values: dict[str, Any], token: str | None) -> web.Response:
        failure = self._failures.take(method, values.get("channel"))
        if failure is not None and not failure.after_store:
            return self._answer(method, values, _failure_body(failure), failure)
        body = self._call(method, values, token)
        if failure is not None:
            return self._answer(method, values, _failure_body(failure, body), failure)
        return self._answer(method, values, body, granted=token == self.bot_token)

    def _call(self, method: str, values: dict[str, Any], token: str | None) -> dict[str, Any]:
        try:
            if method == CONNECTIONS_OPEN:  # the one method taking the app-level token
                return {"ok": True, **self.socket_mode.open(token, self.base_url)}
            if token is None:
                raise ApiError("not_authed")
            if token != self.bot_token:
                raise ApiError("invalid_auth")
            return {"ok": True, **METHODS[method](self._ctx, Args(values))}
        except ApiError as exc:
            return exc.to_body()

    def _answer(
        self,
        method: str,
        values: dict[str, Any],
        body: dict[str, Any],
        failure: InjectedFailure | None = None,
        *,
        granted: bool = False,
    ) -> web.Response:
        """`granted`: the call carried the bot token, so Slack names its scopes in `x-oauth-scopes`."""
        self._record(method, values, bool(body.get("ok")), body.get("error"))
        if failure is None:
            headers = {GRANTED_SCOPES_HEADER: ",".join(self.scopes)} if granted else None
            return web.json_response(body, headers=headers)
        if failure.answer in ("html", "text"):
            html = failure.answer == "html"
            page = "<html><body>Bad gateway</body></html>" if html else "upstream error"
            kind = "text/html" if html else "text/plain"
            return web.Response(text=page, status=failure.status, content_type=kind)
        if failure.answer == "truncated":
            whole = json.dumps(body)
            return web.Response(text=whole[: len(whole) // 2], status=200, content_type="application/json")
        return web.json_response(body, status=failure.status, headers=failure.headers())

    async def _handle_response_url(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (JSONDecodeError, ValueError):
            body = None
        if not isinstance(body, dict):
            self._record("response_url", {}, False, "invalid_payload")
            return web.Response(status=400, text="invalid_payload")
        try:
            target = self._responses.use(request.match_info["token"])
            apply_response(self.workspace, target, body)
        except ApiError as exc:
            self._record("response_url", body, False, exc.error)
            status = 404 if exc.error in {"invalid_token", "used_url"} else 400
            return web.Response(status=status, text=exc.error)
        self._record("response_url", body, True, None)
        return web.Response(text="ok")

    def _record(self, method: str, args: dict[str, Any], ok: bool, error: str | None) -> None:
        self.calls.append(RecordedCall(method, dict(args), ok, error, self._time_fn()))

    # -- arranging ------------------------------------------------------------------------------------

    def add_channel(self, id: str, name: str, bot_member: bool = True) -> Channel:
        return self.workspace.add_channel(Channel(id, name, bot_member))

    def inject_failure(
        self,
        method: str,
        status: int = 429,
        count: int = 1,
        retry_after: int = 1,
        after_store: bool = False,
        *,
        error: str | None = None,
        channel: str | None = None,
    ) -> None:
        """Answer the next `count` calls of `method` (to `channel`, if given) with `status`.

        429 carries `Retry-After: retry_after` and does nothing. A 5xx does nothing either, unless
        `after_store`: then the call takes effect and only the answer is lost, which is the case the
        outbox's idempotency key exists for. Status 200 with `error` is a refusal (see `refuse`).
        """
        self._failures.add(
            method, InjectedFailure(status, retry_after, after_store, refusal=error, channel=channel), count
        )

    def refuse(self, method: str, error: str, count: int = 1, channel: str | None = None) -> None:
        """Answer the next `count` calls of `method` (to `channel`, if given) with `{"ok": false, "error":
        error}` and HTTP 200, doing nothing: Slack refusing a message, e.g. `invalid_blocks`."""
        self.inject_failure(method, status=200, count=count, error=error, channel=channel)

    def answer_badly(
        self, method: str, answer: str, count: int = 1, after_store: bool = True, channel: str | None = None
    ) -> None:
        """Answer the next `count` calls of `method` with HTTP 200 and `answer`: "html" or "text" (a page,
        not JSON), "no_ts" (a success without the message's `ts`) or "truncated" (the answer's JSON cut
        off halfway). With `after_store` the call takes effect and only its answer is bad."""
        failure = InjectedFailure(200, 0, after_store, answer=answer, channel=channel)
        self._failures.add(method, failure, count)

    def hold(self, method: str, channel: str | None = None, count: int = 1) -> Hold:
        """Make the next `count` calls of `method` (to `channel`, if given) wait until `release()`, then
        go on as usual (the message is stored even if the caller gave up): a Slack call that hangs.
        `arrived` is set once a held call waits. Release it before the test ends."""
        hold = Hold(method, channel)
        self._holds.add(hold, count)
        return hold

    def post_user_message(
        self, channel: str, user: str, text: str, thread_ts: str | None = None
    ) -> dict[str, Any]:
        """A message typed by a person, so history and threads can hold more than the bot's posts."""
        return self.workspace.post(
            self.workspace.channel(channel).id, user=user, text=text, thread_ts=thread_ts
        )

    def issue_trigger_id(self, user_id: str) -> str:
        return self.surfaces.issue_trigger(user_id)

    def response_token(self, channel: str, user: str, message_ts: str | None = None) -> str:
        return self._responses.issue(channel, user, message_ts)

    def response_url(self, channel: str, user: str, message_ts: str | None = None) -> str:
        if self.base_url is None:
            raise RuntimeError("set SlackStandin.base_url to where it is served before making response URLs")
        return f"{self.base_url.rstrip('/')}/response/{self.response_token(channel, user, message_ts)}"

    def open_dm(self, user_id: str) -> str:
        return self.workspace.open_dm(user_id).id

    def close_view(self, view_id: str) -> None:
        self.surfaces.close(view_id)

    def replace_view(self, view_id: str, view: dict[str, Any]) -> dict[str, Any]:
        return self.surfaces.update(view_id, None, view, None)

    # -- looking --------------------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[RecordedCall]:
        return [c for c in self.calls if c.method == method]

    def user(self, user_id: str) -> PlayUser:
        return self._ctx.user(user_id)

    def channel(self, ref: str) -> Channel:
        return self.workspace.channel(ref)

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """Top-level messages as they look now (after updates), oldest first."""
        return self.workspace.top_level(channel)

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        return self.workspace.message(channel, ts)

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        """Replies under `ts`, oldest first, without the parent."""
        return self.workspace.replies(channel, ts)

    def ephemerals(self, user: str | None = None) -> list[dict[str, Any]]:
        return self.workspace.ephemerals(user)

    def home(self, user: str) -> dict[str, Any] | None:
        return self.surfaces.home(user)

    @property
    def views(self) -> dict[str, dict[str, Any]]:
        """Open modals by view id."""
        return self.surfaces.modals()

    def view(self, view_id: str) -> dict[str, Any] | None:
        return self.surfaces.view(view_id)

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        """A queue receiving `{"kind": ..., ...}` for every visible change; see `EventHub`."""
        return self._hub.subscribe()

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        self._hub.unsubscribe(queue)


async def _read_call(request: web.Request) -> tuple[dict[str, Any], str | None]:
    """Merge query, form and JSON arguments; the token comes from `Authorization: Bearer` or `token`."""
    values: dict[str, Any] = dict(request.query)
    if request.body_exists:  # not can_read_body: a middleware may have read (and cached) it already
        if request.content_type == "application/json":
            try:
                body = await request.json()
            except (JSONDecodeError, ValueError) as exc:
                raise ApiError("invalid_json") from exc
            if not isinstance(body, dict):
                raise ApiError("invalid_json")
            values.update(body)
        else:
            form = await request.post()
            values.update({k: v for k, v in form.items() if isinstance(v, str)})
    token = values.pop("token", None)
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        token = header.removeprefix("Bearer ").strip()
    return values, token


def _failure_body(failure: InjectedFailure, done: dict[str, Any] | None = None) -> dict[str, Any]:
    if failure.answer == "truncated":  # the answer Slack sent, of which half arrives
        return done if done is not None else {"ok": False, "error": "request_timeout"}
    if failure.answer == "no_ts":
        answer = dict(done or {"ok": True})
        answer.pop("ts", None)
        if isinstance(answer.get("message"), dict):
            answer["message"] = {k: v for k, v in answer["message"].items() if k != "ts"}
        return answer
    return {"ok": False, "error": failure.error}
