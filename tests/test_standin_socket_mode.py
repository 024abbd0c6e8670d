"""The stand-in's Socket Mode, piece by piece, against a bare WebSocket client playing the app: the URL
and who may ask for it, `hello`, envelopes and acks, redelivery, several connections, `disconnect` and
drops. The bot itself over Socket Mode is in test_e2e_socket_mode.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from bot.playground import SlackStandin
from bot.playground.envelopes import CONNECTION_LOST, TIMEOUT

BOT_TOKEN = "xoxb-unit"
APP_TOKEN = "xapp-1-unit"
COMMAND = {"command": "/csb", "text": "help", "user_id": "U1", "trigger_id": "1.T.x"}
CLICK = {"type": "block_actions", "trigger_id": "2.T.x", "actions": []}


@dataclass
class Stand:
    standin: SlackStandin
    url: str
    session: aiohttp.ClientSession

    async def open(self, token: str | None = APP_TOKEN) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.post(f"{self.url}/api/apps.connections.open", headers=headers) as answer:
            return dict(await answer.json())

    async def connect(self) -> tuple[aiohttp.ClientWebSocketResponse, dict[str, Any]]:
        ws = await self.session.ws_connect((await self.open())["url"])
        return ws, await ws.receive_json(timeout=5)


@asynccontextmanager
async def stand(ack_seconds: float = 3.0) -> AsyncIterator[Stand]:
    standin = SlackStandin(bot_token=BOT_TOKEN, app_token=APP_TOKEN)
    standin.socket_mode.ack_seconds = ack_seconds
    server = TestServer(standin.build_app(), host="127.0.0.1")
    await server.start_server()
    standin.base_url = str(server.make_url("")).rstrip("/")
    try:
        async with aiohttp.ClientSession() as session:
            yield Stand(standin, standin.base_url, session)
    finally:
        await standin.socket_mode.close()
        await server.close()


async def ack(ws: aiohttp.ClientWebSocketResponse, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read one envelope and ack it (with `payload`, if given); returns the envelope."""
    envelope = await ws.receive_json(timeout=5)
    await ws.send_json({"envelope_id": envelope["envelope_id"], **({"payload": payload} if payload else {})})
    return dict(envelope)


async def test_the_url_is_for_an_app_level_token_only_and_on_loopback() -> None:
    async with stand() as s:
        assert await s.open(BOT_TOKEN) == {"ok": False, "error": "not_allowed_token_type"}
        assert await s.open("xapp-1-someone-else") == {"ok": False, "error": "invalid_auth"}
        assert await s.open(None) == {"ok": False, "error": "not_authed"}
        opened = await s.open()
        assert opened["ok"] is True and opened["url"].startswith(
            f"ws://{s.url.removeprefix('http://')}/link/"
        )
        assert [(c.method, c.ok) for c in s.standin.calls_to("apps.connections.open")][-1] == (
            "apps.connections.open",
            True,
        )


async def test_socket_mode_off_refuses_every_token() -> None:
    standin = SlackStandin(bot_token=BOT_TOKEN)
    with pytest.raises(Exception, match="invalid_auth"):
        standin.socket_mode.open(APP_TOKEN, "http://127.0.0.1:1")


async def test_hello_first_and_a_ticket_opens_one_connection() -> None:
    async with stand() as s:
        url = (await s.open())["url"]
        ws = await s.session.ws_connect(url)
        hello = await ws.receive_json(timeout=5)
        assert hello["type"] == "hello" and hello["num_connections"] == 1
        assert hello["connection_info"] == {"app_id": s.standin.bot.app_id}
        assert "approximate_connection_time" in hello["debug_info"]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await s.session.ws_connect(url)
        assert refused.value.status == 401
        await ws.close()


async def test_envelopes_carry_their_shape_and_an_ack_returns_the_payload() -> None:
    async with stand() as s:
        ws, _ = await s.connect()
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("slash_commands", COMMAND))
        envelope = await ack(ws, {"text": "hi"})
        assert envelope["type"] == "slash_commands" and envelope["payload"] == COMMAND
        assert envelope["accepts_response_payload"] is True and "retry_attempt" not in envelope
        answer = await delivered
        assert answer is not None and answer.payload == {"text": "hi"} and answer.attempts == 1
        assert 0 <= answer.seconds < 3

        clicked = asyncio.create_task(s.standin.socket_mode.deliver("interactive", CLICK))
        envelope = await ack(ws, {"ignored": True})
        assert envelope["accepts_response_payload"] is False
        answer = await clicked
        assert answer is not None and answer.payload is None  # a click's ack carries nothing back

        event = {"type": "event_callback", "event_id": "Ev1", "event": {"type": "app_home_opened"}}
        evented = asyncio.create_task(s.standin.socket_mode.deliver("events_api", event))
        envelope = await ack(ws)
        assert (envelope["retry_attempt"], envelope["retry_reason"]) == (0, "")
        assert await evented is not None


async def test_an_unacked_envelope_comes_again_with_its_attempt_then_slack_gives_up() -> None:
    async with stand(ack_seconds=0.2) as s:
        ws, _ = await s.connect()
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("interactive", CLICK))
        seen = [await ws.receive_json(timeout=5) for _ in range(4)]
        assert len({e["envelope_id"] for e in seen}) == 1
        assert [(e.get("retry_attempt", 0), e.get("retry_reason", "")) for e in seen] == [
            (0, ""),
            (1, TIMEOUT),
            (2, TIMEOUT),
            (3, TIMEOUT),
        ]
        assert await delivered is None  # three retries, then the user sees Slack's error
        await ws.send_json({"envelope_id": seen[0]["envelope_id"]})
        await _until(lambda: s.standin.socket_mode.stray_acks)  # too late: nothing waits for it now
        await ws.close()


async def test_a_late_ack_of_an_earlier_attempt_counts() -> None:
    async with stand(ack_seconds=0.2) as s:
        ws, _ = await s.connect()
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("slash_commands", COMMAND))
        first = await ws.receive_json(timeout=5)
        second = await ws.receive_json(timeout=5)
        assert second["retry_attempt"] == 1
        await ws.send_json({"envelope_id": first["envelope_id"]})
        answer = await delivered
        assert answer is not None and answer.attempts == 2


async def test_each_envelope_goes_to_one_of_the_open_connections_in_turn() -> None:
    async with stand() as s:
        sockets = [(await s.connect())[0] for _ in range(2)]
        await s.standin.socket_mode.wait_for_connections(2)
        receivers = {index: asyncio.create_task(_ack_all(ws, got=[])) for index, ws in enumerate(sockets)}
        answers = await asyncio.gather(
            *(s.standin.socket_mode.deliver("interactive", {**CLICK, "n": n}) for n in range(6))
        )
        assert all(a is not None for a in answers)
        by_connection = [d.connection for d in s.standin.socket_mode.deliveries]
        assert len(by_connection) == 6 and sorted(set(by_connection)) == sorted(
            s.standin.socket_mode.connections
        )
        assert all(by_connection.count(c) == 3 for c in set(by_connection))
        for task in receivers.values():
            task.cancel()


async def _ack_all(ws: aiohttp.ClientWebSocketResponse, got: list[dict[str, Any]]) -> None:
    while True:
        got.append(await ack(ws))


async def test_disconnect_says_why_sends_nothing_new_there_and_closes_later() -> None:
    async with stand() as s:
        old, _ = await s.connect()
        await s.standin.socket_mode.disconnect("refresh_requested", close_after=0.2)
        message = await old.receive_json(timeout=5)
        assert message["type"] == "disconnect" and message["reason"] == "refresh_requested"
        new, hello = await s.connect()
        assert hello["type"] == "hello"
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("slash_commands", COMMAND))
        assert (await ack(new))["payload"] == COMMAND  # only the new connection gets envelopes
        assert await delivered is not None
        closing = await old.receive(timeout=5)
        assert closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
        await s.standin.socket_mode.disconnect("warning", close_after=5)
        assert (await new.receive_json(timeout=5))["reason"] == "warning"


async def test_a_dropped_connection_s_envelope_goes_to_another_and_an_ack_counts_anywhere() -> None:
    async with stand() as s:
        first, _ = await s.connect()
        s.standin.socket_mode.drop_after_next_send()
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("slash_commands", COMMAND))
        await _until(lambda: not s.standin.socket_mode.connections)
        second, _ = await s.connect()
        again = await second.receive_json(timeout=5)
        assert (again["retry_attempt"], again["retry_reason"]) == (1, CONNECTION_LOST)
        third, _ = await s.connect()
        await third.send_json({"envelope_id": again["envelope_id"]})  # acked on another connection
        answer = await delivered
        assert answer is not None and answer.attempts == 2
        ending = await first.receive(timeout=5)
        if ending.type == aiohttp.WSMsgType.TEXT:  # read before the cut: the app may have acted on it
            assert ending.json()["envelope_id"] == again["envelope_id"]
            ending = await first.receive(timeout=5)
        assert ending.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSE)


async def test_a_lost_ack_means_the_envelope_comes_again_after_the_wait() -> None:
    async with stand(ack_seconds=0.2) as s:
        ws, _ = await s.connect()
        s.standin.socket_mode.lose_next_ack()
        delivered = asyncio.create_task(s.standin.socket_mode.deliver("interactive", CLICK))
        lost = await ack(ws)
        again = await ack(ws)
        assert again["envelope_id"] == lost["envelope_id"]
        assert (again["retry_attempt"], again["retry_reason"]) == (1, TIMEOUT)
        answer = await delivered
        assert answer is not None and answer.attempts == 2
        assert s.standin.socket_mode.lost_acks == [{"envelope_id": lost["envelope_id"]}]


async def _until(check: Any, deadline: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while not check():
        assert loop.time() < end, "timed out"
        await asyncio.sleep(0.01)
