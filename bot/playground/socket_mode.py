"""Slack's Socket Mode, served by the stand-in on loopback, as Slack documents it.

`apps.connections.open`, called with the app-level token (`xapp-`), hands out a one-use WebSocket URL.
The socket first says `hello`; then every slash command, interaction and event arrives as an envelope
`{"envelope_id", "type", "payload", "accepts_response_payload"}` that the app acks by sending back
`{"envelope_id"}` (plus `"payload"`, the answer a slash command or modal submission may carry) within
3 seconds. An envelope not acked in time, or in flight on a connection that goes away, is delivered
again (to any open connection) with `retry_attempt` and `retry_reason`, up to three retries. With
several connections open (several bot processes), each envelope goes to one of them, in turn.

Slack also sends `disconnect` (`refresh_requested`, or `warning` before it closes a connection) and
connections can drop without a word; `disconnect()` and `drop()` rehearse both.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from bot.playground.api_error import ApiError
from bot.playground.envelopes import (
    CONNECTION_LOST,
    ENVELOPE_TYPES,
    TIMEOUT,
    Ack,
    Delivery,
    Envelope,
    accepts_response_payload,
)

log = logging.getLogger(__name__)

CONNECTIONS_OPEN = "apps.connections.open"
LINK_PATH = "/link/"
ACK_SECONDS = 3.0
MAX_RETRIES = 3
CLOSE_AFTER_DISCONNECT_SECONDS = 10.0
"""After `disconnect`, Slack closes the old connection itself if the app has not moved on by then."""
PATIENCE_SECONDS = 60.0
"""How long an envelope waits for an open connection before Slack gives up on it."""
_HOST = "applink-standin"
HELLO_DEBUG_INFO = {"host": _HOST, "build_number": 1, "approximate_connection_time": 18060}


@dataclass
class _Connection:
    id: int
    ws: web.WebSocketResponse
    transport: asyncio.Transport | None
    leaving: bool = False  # told to disconnect: no new envelopes
    closed: asyncio.Event = field(default_factory=asyncio.Event)


class SocketModeServer:
    """The Socket Mode side of one Slack app; `SlackStandin.socket_mode` is its instance."""

    def __init__(
        self,
        app_id: str,
        *,
        ack_seconds: float = ACK_SECONDS,
        max_retries: int = MAX_RETRIES,
        time_fn: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app_id = app_id
        self.app_token: str | None = None
        """The app-level token `apps.connections.open` accepts; None: Socket Mode is off for the app."""
        self.ack_seconds = ack_seconds
        self.max_retries = max_retries
        self.deliveries: list[Delivery] = []
        self.acks: list[Ack] = []
        self.stray_acks: list[dict[str, Any]] = []
        """Acks naming no envelope in flight (a typo in the app, or an ack after Slack gave up)."""
        self.hellos = 0
        self.lost_acks: list[dict[str, Any]] = []
        self._acks_to_lose = 0
        self._sends_to_cut = 0
        self._time = time_fn
        self._tickets: set[str] = set()
        self._connections: dict[int, _Connection] = {}
        self._ids = itertools.count(1)
        self._turn = itertools.count()
        self._pending: dict[str, Envelope] = {}
        self._changed = asyncio.Condition()
        self._closing: set[asyncio.Future[bool]] = set()

    # -- the Web API method and the socket -------------------------------------------------------------

    def open(self, token: str | None, base_url: str | None) -> dict[str, Any]:
        """`apps.connections.open`: a bot or user token is the wrong kind, as Slack says."""
        if token is None:
            raise ApiError("not_authed")
        if token.startswith(("xoxb-", "xoxp-")):
            raise ApiError("not_allowed_token_type")
        if self.app_token is None or token != self.app_token:
            raise ApiError("invalid_auth")
        if base_url is None:
            raise RuntimeError("set SlackStandin.base_url to where it is served before opening sockets")
        ticket = secrets.token_hex(16)
        self._tickets.add(ticket)
        ws_base = base_url.rstrip("/").replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        return {"url": f"{ws_base}{LINK_PATH}?ticket={ticket}&app_id={self.app_id}"}

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get(LINK_PATH, self._handle_socket)

    async def _handle_socket(self, request: web.Request) -> web.StreamResponse:
        """A ticket is good for one connection, as Slack's are."""
        ticket = request.query.get("ticket", "")
        if ticket not in self._tickets:
            return web.Response(status=401, text="invalid_ticket")
        self._tickets.discard(ticket)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        connection = _Connection(next(self._ids), ws, request.transport)
        async with self._changed:
            self._connections[connection.id] = connection
            self._changed.notify_all()
        self.hellos += 1
        try:
            await ws.send_json(self._hello())
            await self._receive(connection)
        except (ConnectionError, RuntimeError):
            pass  # dropped mid-send: the envelopes it held are sent again elsewhere
        finally:
            await self._forget(connection)
        return ws

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "num_connections": len(self._connections),
            "debug_info": HELLO_DEBUG_INFO,
            "connection_info": {"app_id": self.app_id},
        }

    async def _receive(self, connection: _Connection) -> None:
        async for message in connection.ws:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                body = json.loads(message.data)
            except json.JSONDecodeError:
                log.warning("connection %s sent text that is not JSON: %.80s", connection.id, message.data)
                continue
            if isinstance(body, dict) and "envelope_id" in body:
                self._take_ack(connection, body)

    async def _forget(self, connection: _Connection) -> None:
        connection.closed.set()
        async with self._changed:
            self._connections.pop(connection.id, None)
            self._changed.notify_all()

    def _take_ack(self, connection: _Connection, body: dict[str, Any]) -> None:
        """An ack counts on any of the app's connections: a client that reconnected acks there."""
        if self._acks_to_lose:
            self._acks_to_lose -= 1
            self.lost_acks.append(body)
            return
        envelope = self._pending.get(str(body["envelope_id"]))
        if envelope is None or envelope.acked.done():
            self.stray_acks.append(body)
            return
        payload = body.get("payload") if envelope.accepts_response_payload else None
        assert envelope.first_sent is not None
        ack = Ack(
            envelope.id,
            payload if isinstance(payload, dict) else None,
            self._time() - envelope.first_sent,
            envelope.attempts,
            connection.id,
        )
        self.acks.append(ack)
        envelope.acked.set_result(ack)

    # -- sending ---------------------------------------------------------------------------------------

    async def deliver(
        self, type: str, payload: dict[str, Any], *, patience: float = PATIENCE_SECONDS
    ) -> Ack | None:
        """Send an envelope and wait for its ack, sending again as Slack does; None when never acked."""
        if type not in ENVELOPE_TYPES:
            raise ValueError(f"envelope type {type!r}; Socket Mode sends {ENVELOPE_TYPES}")
        envelope = Envelope(
            id=f"{secrets.token_hex(4)}-{secrets.token_hex(2)}-{secrets.token_hex(6)}",
            type=type,
            payload=payload,
            accepts_response_payload=accepts_response_payload(type, payload),
            acked=asyncio.get_running_loop().create_future(),
        )
        self._pending[envelope.id] = envelope
        try:
            async with asyncio.timeout(patience):
                return await self._until_acked(envelope)
        except TimeoutError:
            return None
        finally:
            self._pending.pop(envelope.id, None)

    async def _until_acked(self, envelope: Envelope) -> Ack | None:
        while envelope.attempts <= self.max_retries:
            connection = await self._next_connection()
            if await self._send(envelope, connection) and await self._acked_on(envelope, connection):
                return envelope.acked.result()
            if envelope.acked.done():  # acked elsewhere (say, after a reconnect) while this one waited
                return envelope.acked.result()
        return None

    async def _send(self, envelope: Envelope, connection: _Connection) -> bool:
        envelope.attempts += 1
        if envelope.first_sent is None:
            envelope.first_sent = self._time()
        message = envelope.message()
        self.deliveries.append(
            Delivery(
                envelope.id,
                envelope.type,
                connection.id,
                int(message.get("retry_attempt", 0)),
                str(message.get("retry_reason", "")),
            )
        )
        try:
            await connection.ws.send_json(message)
        except (ConnectionError, RuntimeError):
            envelope.reason = CONNECTION_LOST
            return False
        if self._sends_to_cut:
            self._sends_to_cut -= 1
            _abort(connection)
        return True

    async def _acked_on(self, envelope: Envelope, connection: _Connection) -> bool:
        """Waits for the ack, the connection's end or the 3 s; False leaves the reason for the retry."""
        closed = asyncio.ensure_future(connection.closed.wait())
        waiting: list[asyncio.Future[Any]] = [envelope.acked, closed]
        try:
            done, _ = await asyncio.wait(
                waiting, timeout=self.ack_seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            closed.cancel()
        if envelope.acked.done():
            return True
        envelope.reason = CONNECTION_LOST if closed in done else TIMEOUT
        return False

    async def _next_connection(self) -> _Connection:
        """The open connections take turns; one told to disconnect gets nothing new."""
        async with self._changed:
            await self._changed.wait_for(lambda: bool(self._open()))
            open_now = self._open()
            return open_now[next(self._turn) % len(open_now)]

    def _open(self) -> list[_Connection]:
        return [c for c in self._connections.values() if not c.leaving and not c.closed.is_set()]

    # -- Slack's bad days ------------------------------------------------------------------------------

    @property
    def connections(self) -> list[int]:
        """Ids of the open connections, oldest first."""
        return [c.id for c in self._connections.values() if not c.closed.is_set()]

    async def wait_for_connections(self, count: int, timeout: float = PATIENCE_SECONDS) -> None:
        """Until `count` connections are open and none is on its way out."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: len(self._open()) >= count)

    async def disconnect(
        self,
        reason: str = "refresh_requested",
        connection: int | None = None,
        *,
        close_after: float = CLOSE_AFTER_DISCONNECT_SECONDS,
    ) -> None:
        """Ask one connection (or all) to go: Slack's `refresh_requested`, or `warning` before it closes
        one. The app should open a new one; Slack closes the old one `close_after` seconds later."""
        for target in self._chosen(connection):
            target.leaving = True
            message = {"type": "disconnect", "reason": reason, "debug_info": {"host": _HOST}}
            try:
                await target.ws.send_json(message)
            except (ConnectionError, RuntimeError):
                continue
            asyncio.get_running_loop().call_later(close_after, self._close_soon, target)

    def _close_soon(self, target: _Connection) -> None:
        if not target.closed.is_set():
            closing = asyncio.ensure_future(target.ws.close())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    async def drop(self, connection: int | None = None) -> None:
        """Cut one connection (or all) without a close frame, as a lost network does."""
        for target in self._chosen(connection):
            _abort(target)
            await self._forget(target)

    def lose_next_ack(self, count: int = 1) -> None:
        """The next `count` acks are lost on the way: the app did the work, Slack never heard, and
        sends the envelope again once its 3 s are up (to whichever connection's turn it is)."""
        self._acks_to_lose += count

    def drop_after_next_send(self, count: int = 1) -> None:
        """The connection carrying each of the next `count` envelopes drops right after the send: the
        app may or may not have read it, and Slack sends it again."""
        self._sends_to_cut += count

    def _chosen(self, connection: int | None) -> list[_Connection]:
        if connection is None:
            return list(self._connections.values())
        return [self._connections[connection]] if connection in self._connections else []

    async def close(self) -> None:
        """Close every connection (the stand-in is stopping); the apps will try to reconnect."""
        for target in list(self._connections.values()):
            await target.ws.close()


def _abort(connection: _Connection) -> None:
    if connection.transport is not None:
        connection.transport.abort()
    connection.closed.set()
