"""`csb-bot serve` as a real process under hostile clients: hundreds of idle connections, headers and
bodies sent a byte at a time. Signed requests from Slack must still be answered, slow clients cut off.

The bot's limits are set low in its TOML file so each test runs in seconds; waits poll with bounds.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer
from bot_process import BotProcess
from harness import CHANNEL, HARBOR, ROOT, SECRET, TOKEN, copy_bench
from test_cli import free_port
from waiting import until

from bot.playground import REQUESTER, SlackDriver, SlackStandin

pytestmark = pytest.mark.slow

LOW_FILE_LIMIT = 256


@dataclass
class Served:
    bot: BotProcess
    standin: SlackStandin
    slack_url: str
    port: int

    async def help_is_answered(self) -> None:
        """A signed `/csb help` gets its 200 ack and its ephemeral answer: the bot still serves Slack."""
        before = len(self.standin.ephemerals(REQUESTER))
        url = f"{self.bot.url}/slack/events"
        async with SlackDriver(url, SECRET, self.standin, self.slack_url) as driver:
            response = await driver.slash_command(REQUESTER, "help", channel_id=CHANNEL)
        assert response.status == 200, response.body_text
        await until(lambda: len(self.standin.ephemerals(REQUESTER)) > before, "the reply to /csb help")


def _lower_file_limit() -> None:
    """Run in the child before exec: start the bot with a soft open-file limit far below the hard one."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (LOW_FILE_LIMIT, hard))


@asynccontextmanager
async def serving(tmp_path: Path, server_toml: str) -> AsyncIterator[Served]:
    standin = SlackStandin(bot_token=TOKEN)
    slack_server = TestServer(standin.build_app(), host="127.0.0.1")
    await slack_server.start_server()
    slack_url = str(slack_server.make_url("")).rstrip("/")
    standin.base_url = slack_url
    config = tmp_path / "csb-bot.toml"
    config.write_text(f"[server]\n{server_toml}\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLACK_", "CSB_"))}
    env.update(
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=f"{slack_url}/api/",
        CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'bot.db'}",
        CSB_REPO=str(copy_bench(tmp_path)),
        CSB_HARBOR=str(HARBOR),
        CSB_CONFIG=str(config),
        PYTHONPATH=str(ROOT),
    )
    port = free_port()
    with open(tmp_path / "bot.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_lower_file_limit,
        )
    bot = BotProcess(proc, f"http://127.0.0.1:{port}")
    try:
        await until(lambda: _healthy(bot, tmp_path), "the bot to answer /healthz")
        yield Served(bot, standin, slack_url, port)
    finally:
        proc.terminate()
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await slack_server.close()


async def _healthy(bot: BotProcess, tmp_path: Path) -> bool:
    if bot.proc.poll() is not None:
        raise AssertionError(f"the bot exited: {(tmp_path / 'bot.log').read_text()}")
    reader_writer = None
    with suppress(OSError):
        reader_writer = await asyncio.open_connection("127.0.0.1", int(bot.url.rsplit(":", 1)[1]))
    if reader_writer is None:
        return False
    reader, writer = reader_writer
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n")
    answer = await reader.read()
    writer.close()
    return answer.startswith(b"HTTP/1.1 200")


def open_files_limit(pid: int) -> tuple[int, int]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files line in /proc/<pid>/limits")


def closed_by_server(sock: socket.socket) -> bool:
    """True once the peer closed (EOF or reset); False while the connection is open and silent."""
    try:
        return sock.recv(1024, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


async def test_idle_connections_beyond_the_cap_are_closed_and_slack_is_still_answered(
    tmp_path: Path,
) -> None:
    cap, idle_count = 32, 300
    async with serving(tmp_path, f"max_connections = {cap}\nheader_timeout_sec = 120") as served:
        soft, hard = open_files_limit(served.bot.proc.pid)
        assert soft == hard, f"soft open-file limit {soft} left below the hard limit {hard}"
        idle = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(idle_count)]
        try:
            await served.help_is_answered()
            # Well inside the 120 s header deadline: only the cap can have closed them.
            await until(
                lambda: sum(map(closed_by_server, idle)) >= idle_count - cap,
                f"the bot to keep at most {cap} idle connections open",
            )
            await served.help_is_answered()
        finally:
            for sock in idle:
                sock.close()


async def dribble(port: int, head: bytes, tail: bytes, every: float, bound: float) -> tuple[bytes, float]:
    """Send `head` at once, then `tail` one byte every `every` seconds, as a slowloris client does,
    until the server closes the connection; returns what it answered and how long that took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    answer = b""

    async def read_all() -> bytes:
        return await reader.read()

    reading = asyncio.ensure_future(read_all())
    try:
        for byte in tail:
            if reading.done() or loop.time() - start > bound:
                break
            with suppress(ConnectionError):
                writer.write(bytes([byte]))
                await writer.drain()
            await asyncio.wait([reading], timeout=every)
        with suppress(ConnectionError):
            answer = await asyncio.wait_for(reading, timeout=max(0.1, bound - (loop.time() - start)))
    except TimeoutError:
        raise AssertionError(f"the server kept a slow client for over {bound} s") from None
    finally:
        reading.cancel()
        writer.close()
    return answer, loop.time() - start


async def test_slow_headers_and_slow_bodies_are_cut_off(tmp_path: Path) -> None:
    limits = "header_timeout_sec = 1\nbody_timeout_sec = 1"
    async with serving(tmp_path, limits) as served:
        headers = b"POST /slack/events HTTP/1.1\r\nHost: bot\r\n"
        _, took = await dribble(served.port, headers, b"X-Slow: " + b"a" * 200, every=0.3, bound=15)
        assert took < 15

        head = headers + b"Content-Type: application/json\r\nContent-Length: 200\r\n\r\n"
        answer, took = await dribble(served.port, head, b"{" + b" " * 199, every=0.3, bound=15)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"request body not received within 1 s" in answer
        await served.help_is_answered()


async def test_a_request_still_sending_its_body_gives_way_to_a_new_connection(tmp_path: Path) -> None:
    """Two requests whose bodies never come hold the cap of two: a health check still gets its 200, the
    older of them is closed to make room, and the other one meets its body deadline (408)."""
    async with serving(tmp_path, "max_connections = 2\nbody_timeout_sec = 3") as served:
        slow = []
        for _ in range(2):
            reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
            writer.write(
                b"POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Length: 100\r\n"
                b"Expect: 100-continue\r\n\r\n"
            )
            assert (await asyncio.wait_for(reader.readline(), 15)).startswith(b"HTTP/1.1 100")
            slow.append((reader, writer))
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 15)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200"), answer
        (oldest, _), (younger, _) = slow
        assert (await asyncio.wait_for(oldest.read(), 15)).strip() == b""  # closed, not answered
        assert b"HTTP/1.1 408" in await asyncio.wait_for(younger.read(), 15)
        for _, slow_writer in slow:
            slow_writer.close()
        await served.help_is_answered()


HOG_ADDRESS = "127.0.0.2"  # one client of its own on loopback: Linux answers all of 127.0.0.0/8


async def slow_bodies(port: int, stop: asyncio.Event, cut: list[int], *, times: int, seconds: float) -> None:
    """One of a hostile client's connections: a request whose body never comes, sent again as soon as the
    server cuts it; stops by itself after `times` connections or `seconds`, or when `stop` is set."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    for _ in range(times):
        if stop.is_set() or loop.time() > deadline:
            return
        writer = None
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(HOG_ADDRESS, 0))
            writer.write(b"POST /slack/events HTTP/1.1\r\nHost: bot\r\nContent-Length: 100\r\n\r\n{")
            await writer.drain()
            await asyncio.wait_for(reader.read(), max(0.1, deadline - loop.time()))
        except (OSError, TimeoutError):
            pass
        finally:
            if writer is not None:
                writer.close()
        cut[0] += 1


async def health_is_ok(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return answer.startswith(b"HTTP/1.1 200")


async def test_one_client_reconnecting_slow_requests_cannot_starve_slack_or_health_checks(
    tmp_path: Path,
) -> None:
    """Three times the cap of slow requests from one client, each sent again whenever cut, keep the cap
    full; every signed `/csb help` and every `/healthz` meanwhile is still answered 200."""
    cap = 16
    limits = f"max_connections = {cap}\nheader_timeout_sec = 60\nbody_timeout_sec = 60"
    async with serving(tmp_path, limits) as served:
        stop, cut = asyncio.Event(), [0]
        hogs = [
            asyncio.ensure_future(slow_bodies(served.port, stop, cut, times=40, seconds=90))
            for _ in range(3 * cap)
        ]
        try:
            await until(lambda: cut[0] >= 2 * cap, "the client's connections to fill the cap and be cut")
            for _ in range(10):
                assert await health_is_ok(served.port)
                await served.help_is_answered()
        finally:
            stop.set()
            await asyncio.gather(*hogs)
        log = (tmp_path / "bot.log").read_text()
        assert "Traceback" not in log, log
