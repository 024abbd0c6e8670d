"""Serving the web app on a port so that no client can exhaust the bot: a cap on open connections, a
deadline for a request's headers and for its body, and the open-file limit raised at start.

Slack sends a request in milliseconds, so anything slower is a stuck or hostile client. Left alone,
1,010 idle connections once used up the process's file descriptors and the next lane could not start.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import signal
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from aiohttp import web

from bot.domain.errors import InfraError
from bot.heap import freeze_startup_heap
from bot.settings import ServerConfig

log = logging.getLogger(__name__)

# Time to drain the rest of a body answered early (413, 408), so the client reads the answer, not a reset.
_LINGER_SEC = 1.0
# On SIGINT or SIGTERM, the longest wait for the Socket Mode client to close its connection.
STOP_GRACE_SECONDS = 5.0
_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\n"
    b'Content-Length: 29\r\n\r\n{"error": "too many clients"}'
)


def raise_open_file_limit() -> tuple[int, int]:
    """Soft RLIMIT_NOFILE up to the hard limit: lanes, log files and SQLite need descriptors too.
    Returns (before, after); a refusal by the system leaves the limit as it was."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        return soft, soft
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:
        log.warning("could not raise the open-file limit from %s to %s: %s", soft, hard, exc)
        return soft, soft
    log.info("open-file limit raised from %s to %s", soft, hard)
    return soft, hard


class _Full(asyncio.Protocol):
    """A connection beyond the cap while every open one is busy: one 503, then closed once the client has
    finished sending (closing on unread data would reset the connection and lose the 503), or after
    a second at most."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(_FULL)
        transport.write_eof()
        asyncio.get_running_loop().call_later(_LINGER_SEC, transport.close)

    def data_received(self, data: bytes) -> None:
        """The request is not read: the answer is the same whatever it asks."""

    def eof_received(self) -> bool:
        return False  # the transport closes itself


class _CountedHandler(web.RequestHandler):
    """aiohttp's connection handler, known to the guard from creation until its connection is lost.
    (The event loop accepts a burst of connections before any is "made", so the server's own list lags.)"""

    def __init__(self, manager: web.Server, guard: ConnectionGuard, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._guard = guard
        self._evicted = False
        self.peer: str | None = None  # the client's address, once connected ("" when it has none)

    def evict(self) -> None:
        self._evicted = True
        if self.transport is not None:
            self.force_close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peername = transport.get_extra_info("peername")
        self.peer = str(peername[0]) if isinstance(peername, tuple) and peername else ""
        if self._evicted:  # chosen for closing while its connection was still being set up
            self.force_close()
        else:
            self._guard.made()

    def connection_lost(self, exc: BaseException | None) -> None:
        self._guard.forget(self)
        super().connection_lost(exc)


class ConnectionGuard:
    """Counts the open connections and knows which are being answered. Beyond the cap, a connection
    just made closes one that is only waiting on its client (just connected, dribbling headers, kept
    alive, or still sending its body): the oldest such one of the client holding the most connections.
    So one client reconnecting hundreds of slow requests as fast as they are cut only ever displaces
    its own, while Slack's requests, whose bodies arrive in milliseconds, and health checks are
    answered. Only when every open connection is being answered does a new one get a 503.

    The choice waits until the newcomer's address is known (`made`): the event loop accepts a burst of
    connections before any is made, and a choice made blind could close Slack's in favour of the flood.
    """

    def __init__(self, config: ServerConfig) -> None:
        self._config = config
        self._open: dict[_CountedHandler, None] = {}  # oldest first
        self._answering: set[object] = set()  # whole request received, its handler running
        self._server: web.Server | None = None
        self._warned_at = float("-inf")

    def attach(self, server: web.Server) -> None:
        self._server = server

    def forget(self, handler: _CountedHandler) -> None:
        self._open.pop(handler, None)

    def protocol(self) -> asyncio.BaseProtocol:
        """The protocol factory given to the event loop: one call per accepted connection."""
        assert self._server is not None, "attach() the runner's server before serving"
        if len(self._open) >= self._config.max_connections and all(h in self._answering for h in self._open):
            self._warn(closing_one=False)
            return _Full()
        handler = _CountedHandler(
            self._server,
            self,
            loop=asyncio.get_running_loop(),
            # An idle connection, or one still sending its headers, is closed after this.
            keepalive_timeout=self._config.header_timeout_sec,
            lingering_time=_LINGER_SEC,
            access_log=None,
        )
        self._open[handler] = None
        return handler

    def made(self) -> None:
        """Back down to the cap, counting the connections whose client is known (the newcomer's too)."""
        made = [h for h in self._open if h.peer is not None]
        excess = len(made) - self._config.max_connections
        if excess <= 0:
            return
        self._warn(closing_one=True)
        waiting = [h for h in made if h not in self._answering]
        per_client = Counter(h.peer for h in made)
        # sorted() is stable: the oldest first among the connections of the client with the most.
        for victim in sorted(waiting, key=lambda h: -per_client[h.peer])[:excess]:
            victim.evict()
            self.forget(victim)

    @web.middleware
    async def middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Reads the body within its deadline, then marks the connection answered while it is handled."""
        if request.body_exists:
            try:
                async with asyncio.timeout(self._config.body_timeout_sec):
                    await request.read()  # cached: handlers read it again for free
            except TimeoutError:
                return _too_slow(self._config.body_timeout_sec)
            except (ConnectionError, RuntimeError):  # closed mid-body (by its client, or for a newcomer)
                return _gone()
        self._answering.add(request.protocol)
        try:
            return await handler(request)
        finally:
            self._answering.discard(request.protocol)

    def _warn(self, *, closing_one: bool) -> None:
        now = asyncio.get_running_loop().time()
        if now - self._warned_at < 60:
            return
        self._warned_at = now
        action = "closing a waiting one" if closing_one else "refusing new ones (503)"
        log.warning("%s open connections, the cap ([server] max_connections): %s", len(self._open), action)


def _gone() -> web.Response:
    """The answer to a request whose connection closed before its body came: nobody reads it."""
    response = web.Response(status=400)
    response.force_close()
    return response


def _too_slow(seconds: float) -> web.Response:
    response = web.json_response({"error": f"request body not received within {seconds:g} s"}, status=408)
    response.force_close()
    return response


class Listening:
    """A started server: the aiohttp runner and the listening sockets, closed together."""

    def __init__(self, runner: web.AppRunner, server: asyncio.Server) -> None:
        self.runner = runner
        self._server = server

    @property
    def port(self) -> int:
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self._server.close()
        await self.runner.cleanup()


async def start_listening(web_app: web.Application, host: str, port: int, config: ServerConfig) -> Listening:
    """Bind first, so a busy port is one line before anything starts; then start the app (its timers
    and database) and serve. `port=0` picks a free port (`Listening.port`)."""
    guard = ConnectionGuard(config)
    web_app.middlewares.append(guard.middleware)
    loop = asyncio.get_running_loop()
    try:
        server = await loop.create_server(guard.protocol, host, port, start_serving=False)
    except OSError as exc:
        raise InfraError(_bind_error(host, port, exc)) from None
    runner = web.AppRunner(web_app, access_log=None)  # connections get their handlers from the guard
    try:
        await runner.setup()
    except BaseException:
        server.close()
        raise
    assert runner.server is not None
    guard.attach(runner.server)
    await server.start_serving()
    return Listening(runner, server)


def _bind_error(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return (
            f"cannot listen on {host}:{port}: the port is in use (another csb-bot?); choose another"
            " with --port"
        )
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def serve_forever(
    web_app: web.Application,
    host: str,
    port: int,
    config: ServerConfig,
    *,
    ready: Callable[[Listening], None],
    alongside: Callable[[], Coroutine[Any, Any, object]] | None = None,
) -> None:
    """Serve until SIGINT or SIGTERM (or until `alongside`, e.g. the Socket Mode client, returns)."""
    raise_open_file_limit()
    asyncio.run(_serve(web_app, host, port, config, ready, alongside))


async def _serve(
    web_app: web.Application,
    host: str,
    port: int,
    config: ServerConfig,
    ready: Callable[[Listening], None],
    alongside: Callable[[], Coroutine[Any, Any, object]] | None,
) -> None:
    listening = await start_listening(web_app, host, port, config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    waits: list[asyncio.Future[object]] = [asyncio.ensure_future(stop.wait())]
    if alongside is not None:
        waits.append(asyncio.ensure_future(alongside()))
    try:
        frozen = freeze_startup_heap()
        log.debug("froze the startup heap: %d objects out of full collections", frozen)
        ready(listening)
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()  # an error of the Socket Mode client ends serving with that error
    finally:
        for task in waits:
            task.cancel()
        # Let them finish their own teardown (the Socket Mode client closes its WebSocket and session).
        await asyncio.wait(waits, timeout=STOP_GRACE_SECONDS)
        await listening.close()
