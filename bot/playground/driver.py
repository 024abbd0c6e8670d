"""Plays the Slack side towards the bot: signed slash commands, clicks, submissions and events.

Over HTTP, requests are signed with the app's signing secret exactly as Slack signs them, so the bot's
own verification runs on every test. In Socket Mode (`socket_mode=True`) the same payloads go out as
envelopes on the bot's WebSocket (`SlackStandin.socket_mode`), and the ack is the answer. Payloads
come from the stand-in's state (the stored card a user clicks, the open modal they submit), so a test
cannot click a button the bot never drew.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any
from urllib.parse import urlencode

import aiohttp

from bot.domain.command_line import COMMAND
from bot.playground.payloads import (
    AppContext,
    Button,
    app_home_opened_body,
    block_actions_payload,
    buttons,
    ephemeral_block_actions_payload,
    home_block_actions_payload,
    select_choice,
    slash_command_form,
    view_submission_payload,
)
from bot.playground.signing import signed_headers
from bot.playground.standin import SlackStandin

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


class ButtonNotFound(LookupError):
    """The message has no button with that label; the message lists the labels it does have."""


@dataclass(frozen=True, slots=True)
class DriverResponse:
    """The bot's HTTP answer: its ack body (e.g. a slash command's immediate reply) parsed when JSON."""

    status: int
    body_text: str
    json: Any | None
    ack_seconds: float | None = None
    """Socket Mode: from the envelope's first send to its ack (retries included)."""


NO_ACK = 408
"""The status a Socket Mode envelope gets when the bot never acked it (Slack shows the user an error)."""


class SlackDriver:
    """Sends what Slack would send to the bot at `bot_url` (its `/slack/events` endpoint)."""

    def __init__(
        self,
        bot_url: str,
        signing_secret: str,
        standin: SlackStandin,
        standin_url: str,
        *,
        time_fn: Callable[[], float] = time.time,
        socket_mode: bool = False,
    ) -> None:
        self.bot_url = bot_url
        self.socket_mode = socket_mode
        """Deliver over the stand-in's Socket Mode connections instead of POSTing to `bot_url`."""
        self.signing_secret = signing_secret
        self.standin = standin
        self.standin_url = standin_url.rstrip("/")
        """Root where the stand-in is served (not its `/api/`); response URLs are built on it."""
        self.time_fn = time_fn
        """Read for `X-Slack-Request-Timestamp`; make it lag to send a stale (replayed) request."""
        self._session: aiohttp.ClientSession | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> SlackDriver:
        self._session = aiohttp.ClientSession()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- what users do --------------------------------------------------------------------------------

    async def slash_command(
        self,
        user_id: str,
        text: str,
        channel_id: str = "C0PLAY",
        command: str = COMMAND,
        trigger_id: str | None = None,
    ) -> DriverResponse:
        """`trigger_id`: the invocation's id; pass the one of an earlier command to deliver it again."""
        channel = self.standin.channel(channel_id)
        form = slash_command_form(
            self._app(),
            self.standin.user(user_id),
            channel,
            command,
            text,
            self._response_url(channel.id, user_id),
            trigger_id or self.standin.issue_trigger_id(user_id),
        )
        if self.socket_mode:
            return await self._envelope("slash_commands", form)
        return await self.post(urlencode(form), FORM)

    async def click(
        self,
        user_id: str,
        channel_id: str,
        message_ts: str,
        action_id: str,
        value: str | None = None,
        block_id: str | None = None,
    ) -> DriverResponse:
        """Click the element `action_id` of a stored message; `value`/`block_id` default to the element's."""
        message = self._stored_message(channel_id, message_ts)
        drawn = next((b for b in buttons(message.get("blocks", [])) if b.action_id == action_id), None)
        button = Button(
            block_id=block_id or (drawn.block_id if drawn else ""),
            action_id=action_id,
            text=drawn.text if drawn else action_id,
            value=value if value is not None else (drawn.value if drawn else None),
            style=drawn.style if drawn else None,
        )
        return await self._send_click(user_id, channel_id, message, button)

    async def click_button(
        self, user_id: str, channel_id: str, message_ts: str, label: str
    ) -> DriverResponse:
        """Click the button whose visible text is `label`, as a person looking at the card would."""
        message = self._stored_message(channel_id, message_ts)
        drawn = buttons(message.get("blocks", []))
        button = next((b for b in drawn if b.text == label), None)
        if button is None:
            labels = [b.text for b in drawn]
            raise ButtonNotFound(
                f"no button {label!r} on message {message_ts} in {channel_id}; it has {labels}"
            )
        return await self._send_click(user_id, channel_id, message, button)

    async def choose(
        self,
        user_id: str,
        channel_id: str,
        message_ts: str,
        action_id: str,
        option_text: str,
        value: str | None = None,
    ) -> DriverResponse:
        """Pick the option shown as `option_text` in the static select `action_id` of a stored message;
        `value` defaults to the option's (another is what a forged or stale choice sends)."""
        message = self._stored_message(channel_id, message_ts)
        choice = select_choice(message.get("blocks", []), action_id, option_text)
        if choice is None:
            raise ButtonNotFound(f"no option {option_text!r} in select {action_id!r} on message {message_ts}")
        if value is not None:
            choice = replace(choice, option={**choice.option, "value": value})
        payload = block_actions_payload(
            self._app(),
            self.standin.user(user_id),
            self.standin.channel(channel_id),
            message,
            choice,
            self._response_url(channel_id, user_id, message["ts"]),
            self.standin.issue_trigger_id(user_id),
            f"{self.time_fn():.6f}",
        )
        return await self.interaction(payload)

    async def click_ephemeral_button(
        self, user_id: str, label: str, ts: str | None = None, value: str | None = None
    ) -> DriverResponse:
        """Click the button labelled `label` on the ephemeral message `ts` shown to `user_id` (by default
        the latest with one); `value` defaults to the button's. Its response_url posts a new ephemeral:
        the stand-in does not replace an ephemeral in place."""
        for ephemeral in reversed(self.standin.ephemerals(user_id)):
            if ts is not None and ephemeral["ts"] != ts:
                continue
            button = next((b for b in buttons(ephemeral.get("blocks", [])) if b.text == label), None)
            if button is not None:
                break
        else:
            raise ButtonNotFound(f"no ephemeral message shown to {user_id} has a button {label!r}")
        if value is not None:
            button = replace(button, value=value)
        channel = self.standin.channel(ephemeral["channel"])
        payload = ephemeral_block_actions_payload(
            self._app(),
            self.standin.user(user_id),
            channel,
            ephemeral,
            button,
            self._response_url(channel.id, user_id),
            self.standin.issue_trigger_id(user_id),
            f"{self.time_fn():.6f}",
        )
        return await self.interaction(payload)

    async def click_home_button(self, user_id: str, label: str) -> DriverResponse:
        """Click the button labelled `label` on the user's published App Home tab."""
        view = self.standin.home(user_id)
        if view is None:
            raise ButtonNotFound(f"{user_id} has no home tab yet")
        drawn = buttons(view.get("blocks", []))
        button = next((b for b in drawn if b.text == label), None)
        if button is None:
            raise ButtonNotFound(
                f"no button {label!r} on {user_id}'s home tab; it has {[b.text for b in drawn]}"
            )
        payload = home_block_actions_payload(
            self._app(),
            self.standin.user(user_id),
            view,
            button,
            self.standin.issue_trigger_id(user_id),
            f"{self.time_fn():.6f}",
        )
        return await self.interaction(payload)

    async def submit_view(
        self, user_id: str, view_id: str, values: dict[str, dict[str, dict[str, Any]]]
    ) -> DriverResponse:
        """Submit an open modal with `values` as `state.values`, then close/update it as Slack would.

        `values` maps block_id → action_id → the element's value dict, e.g.
        `{"model": {"model_input": {"type": "plain_text_input", "value": "claude"}}}`.
        """
        view = self.standin.views.get(view_id)
        if view is None:
            raise LookupError(f"no open modal {view_id}; open ones: {sorted(self.standin.views)}")
        _check_block_ids(view, values)
        payload = view_submission_payload(
            self._app(), self.standin.user(user_id), view, values, self.standin.issue_trigger_id(user_id)
        )
        response = await self.interaction(payload)
        self._apply_view_answer(user_id, view_id, response)
        return response

    async def app_home_opened(self, user_id: str) -> DriverResponse:
        channel_id = self.standin.open_dm(user_id)
        body = app_home_opened_body(
            self._app(),
            user_id,
            channel_id,
            self.standin.home(user_id),
            f"{self.time_fn():.6f}",
            f"Ev{next(self._ids):08d}PLAY",
        )
        if self.socket_mode:
            return await self._envelope("events_api", body)
        return await self.post(json.dumps(body), JSON)

    # -- the wire -------------------------------------------------------------------------------------

    async def interaction(self, payload: dict[str, Any]) -> DriverResponse:
        """An interaction payload (a click, a submission) as Slack sends it in this driver's mode."""
        if self.socket_mode:
            return await self._envelope("interactive", payload)
        return await self.post(urlencode({"payload": json.dumps(payload)}), FORM)

    async def _envelope(self, kind: str, payload: dict[str, Any]) -> DriverResponse:
        ack = await self.standin.socket_mode.deliver(kind, payload)
        if ack is None:
            return DriverResponse(NO_ACK, "not acknowledged", None)
        text = json.dumps(ack.payload) if ack.payload else ""
        return DriverResponse(200, text, ack.payload, ack_seconds=ack.seconds)

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        signature: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> DriverResponse:
        """Send a raw body signed as Slack would; pass `signature` to send a forged one instead."""
        if self._session is None:
            raise RuntimeError("use SlackDriver as `async with SlackDriver(...) as driver:`")
        sent = {
            "Content-Type": content_type,
            **signed_headers(self.signing_secret, int(self.time_fn()), body),
        }
        if signature is not None:
            sent["X-Slack-Signature"] = signature
        sent.update(headers or {})
        async with self._session.post(self.bot_url, data=body.encode(), headers=sent) as answer:
            text = await answer.text()
        return DriverResponse(answer.status, text, _maybe_json(text))

    # -- helpers --------------------------------------------------------------------------------------

    async def _send_click(
        self, user_id: str, channel_id: str, message: dict[str, Any], button: Button
    ) -> DriverResponse:
        payload = block_actions_payload(
            self._app(),
            self.standin.user(user_id),
            self.standin.channel(channel_id),
            message,
            button,
            self._response_url(channel_id, user_id, message["ts"]),
            self.standin.issue_trigger_id(user_id),
            f"{self.time_fn():.6f}",
        )
        return await self.interaction(payload)

    def _apply_view_answer(self, user_id: str, view_id: str, response: DriverResponse) -> None:
        """Slack closes the modal on a plain ack, keeps it on `errors`, swaps it on `update`."""
        if response.status != 200:
            return
        answer = response.json if isinstance(response.json, dict) else {}
        action = answer.get("response_action")
        if action == "errors":
            return
        if action == "update":
            self.standin.replace_view(view_id, answer["view"])
        elif action == "clear":
            for open_id in [v for v in self.standin.views if self.standin.surfaces.owner(v) == user_id]:
                self.standin.close_view(open_id)
        else:
            self.standin.close_view(view_id)

    def _stored_message(self, channel_id: str, message_ts: str) -> dict[str, Any]:
        message = self.standin.message(channel_id, message_ts)
        if message is None:
            raise LookupError(f"no message {message_ts} in {channel_id}")
        return message

    def _response_url(self, channel_id: str, user_id: str, message_ts: str | None = None) -> str:
        token = self.standin.response_token(channel_id, user_id, message_ts)
        return f"{self.standin_url}/response/{token}"

    def _app(self) -> AppContext:
        return AppContext(
            team_id=self.standin.team_id,
            team_domain=self.standin.team_domain,
            app_id=self.standin.bot.app_id,
            bot_user_id=self.standin.bot_user_id,
        )


def _check_block_ids(view: dict[str, Any], values: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Catch a typo in a test's `values` here rather than as a puzzling KeyError inside the bot."""
    known = {b.get("block_id") for b in view.get("blocks", []) if isinstance(b, dict)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise KeyError(
            f"view {view['id']} has no blocks {unknown}; its block_ids are {sorted(map(str, known))}"
        )


def _maybe_json(text: str) -> Any | None:
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return None
