"""Ack latency of signed `/csb run` slash commands: the bot against a bare Bolt app that only acks.

Slack gives an app 3 seconds to ack, and under a burst the bot's work after each ack (catalog
resolve, SQLite writes, card posts) shares the event loop with the acks still to come. The goal
(issue 30) is a p99 at concurrency 50 no higher than a Bolt app doing nothing at all (1.0x). Each
server's CPU time during the c=50 phases is printed per request too (`cpu_ms_per_request_c50_*`): on a
shared machine the latencies move with the load, the CPU much less; the bot's includes whatever of its
work after the acks ran during the phase.

Four processes, so no server shares an event loop with the load: the bot (`python -m bot serve`),
a bare Bolt app, a Slack stand-in receiving the bot's Web API calls, and this script sending load.
The two targets are measured alternately within one run (bot c=1, bare c=1, bot c=50, bare c=50,
per round), because a shared machine drifts; between phases the script waits until the bot has
posted every card it owes, so its backlog never lands on the bare app's turn.

    .venv/bin/python bench/ack_latency.py [--rounds 3] [--requests 500] [--requests-c1 100] [--socket-mode]

With `--socket-mode` both apps take the commands over Socket Mode instead: each connects to a Slack
stand-in of its own (the same code, one process each), which sends the envelopes and times each from
its send to the app's ack on the WebSocket. The load generator asks each stand-in for a phase and
reads its figures back.

Exits 1 when any request got a non-200 answer (the figures are then not a measurement); in Socket
Mode, when any envelope was not acked at its first send.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.playground import CAST, DEFAULT_CHANNELS, REQUESTER, SlackStandin, slack_signature
from bot.playground.payloads import AppContext, slash_command_form
from bot.slack.inbound.socket_mode import PING_INTERVAL_SECONDS

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
TOKEN = "xoxb-bench-token"
SECRET = "bench-signing-secret"
APP_TOKEN = "xapp-bench-app-token"
HARBOR = "configs/example-bench/bin/harbor"  # relative: the bot resolves it from the project root
COMMAND_TEXT = "run csb_sdlc_fix"
GOAL_RATIO = 1.0  # issue 30: no slower than a bare Bolt app
WARMUP = 20
READY_TIMEOUT = 30.0
DRAIN_TIMEOUT = 120.0
STATS_PATH = "/bench/stats"
LOAD_PATH = "/bench/load"
ENVELOPE_PATIENCE = 30.0


# -- the servers (each runs in its own child process: `ack_latency.py _serve <role> <port> ...`) -------


def _serve_standin(port: int, socket_mode: bool = False) -> None:
    """The bot's Slack; `/bench/stats` lets the load generator see when the bot's backlog is posted. In
    Socket Mode, `/bench/load` sends a phase of envelopes to the connected app and returns the figures."""
    standin = SlackStandin(
        bot_token=TOKEN, base_url=f"http://{HOST}:{port}", app_token=APP_TOKEN if socket_mode else None
    )

    async def stats(_request: web.Request) -> web.Response:
        posts = standin.calls_to("chat.postMessage")
        failed = sum(1 for call in standin.calls if not call.ok)
        return web.json_response(
            {
                "cards": sum(1 for c in posts if c.ok),
                "failed_calls": failed,
                "connections": len(standin.socket_mode.connections),
            }
        )

    commands = SignedCommands(f"http://{HOST}:{port}", prefix=str(port))

    async def socket_load(request: web.Request) -> web.Response:
        phase = await request.json()
        sample = await envelope_load(standin, commands, int(phase["total"]), int(phase["concurrency"]))
        return web.json_response({"latencies_ms": sample.latencies_ms, "failures": sample.failures})

    app = standin.build_app()
    app.router.add_get(STATS_PATH, stats)
    app.router.add_post(LOAD_PATH, socket_load)
    web.run_app(app, host=HOST, port=port, print=None, access_log=None)


async def envelope_load(
    standin: SlackStandin, commands: SignedCommands, total: int, concurrency: int
) -> Sample:
    """As `load`, with envelopes: each latency is the stand-in's, from the envelope's send to its ack."""
    sample = Sample()
    remaining = iter(range(total))

    async def worker() -> None:
        for _ in remaining:
            ack = await standin.socket_mode.deliver(
                "slash_commands", commands.form(), patience=ENVELOPE_PATIENCE
            )
            outcome = "no_ack" if ack is None else ("200" if ack.attempts == 1 else "acked_on_a_retry")
            sample.latencies_ms.append(ENVELOPE_PATIENCE * 1000 if ack is None else ack.seconds * 1000)
            if outcome != "200":
                sample.failures[outcome] = sample.failures.get(outcome, 0) + 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return sample


def _serve_bare(port: int, slack_api_url: str) -> None:
    """Bolt configured as the bot configures it (client with token, signing secret), minus the work."""
    bolt = AsyncApp(client=AsyncWebClient(token=TOKEN, base_url=slack_api_url), signing_secret=SECRET)

    @bolt.command("/csb")
    async def on_csb(ack: AsyncAck) -> None:
        await ack()

    async def events(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await bolt.async_dispatch(await to_bolt_request(request)))

    async def healthz(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_post("/slack/events", events)
    app.router.add_get("/healthz", healthz)
    web.run_app(app, host=HOST, port=port, print=None)


def _serve_bare_socket(slack_api_url: str) -> None:
    """The same bare app over Socket Mode, with the handler and ping interval the bot uses."""

    async def run() -> None:
        bolt = AsyncApp(client=AsyncWebClient(token=TOKEN, base_url=slack_api_url), signing_secret=SECRET)

        @bolt.command("/csb")
        async def on_csb(ack: AsyncAck) -> None:
            await ack()

        handler = AsyncSocketModeHandler(bolt, APP_TOKEN, ping_interval=PING_INTERVAL_SECONDS)
        try:
            await handler.start_async()
        finally:
            await handler.close_async()

    asyncio.run(run())


# -- child processes ------------------------------------------------------------------------------------


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 20) -> str:
        """The last lines that are not INFO: the bot's scheduler alone logs four INFO lines a second."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join([line for line in text.splitlines() if " INFO " not in line][-lines:])


@dataclass
class Children:
    workdir: Path
    started: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> Child:
        """Output goes to a file, not a pipe: a pipe nobody reads would block a chatty server."""
        log = self.workdir / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        child = Child(name, process, log)
        self.started.append(child)
        return child

    def stop_all(self) -> None:
        for child in self.started:
            if child.process.poll() is None:
                child.process.terminate()
        for child in self.started:
            try:
                child.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()


@contextmanager
def running_children() -> Iterator[Children]:
    with tempfile.TemporaryDirectory(prefix="csb-ack-bench-") as tmp:
        children = Children(Path(tmp))
        try:
            yield children
        finally:
            children.stop_all()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


# Hundreds of cards land in one channel; at Slack's one post a second the backlog would take minutes
# to drain between phases. The pacing is not what this bench measures, so it is turned off.
BENCH_CONFIG = """
[notifier]
post_interval_seconds = 0
"""


def bot_env(
    slack_api_url: str, database: Path, socket_mode: bool = False, database_url: str | None = None
) -> dict[str, str]:
    """HTTP mode (no app token) unless `socket_mode`, the example bench, and the default config minus
    post pacing; a SQLite file at `database` unless `database_url` names another database."""
    env = {k: v for k, v in os.environ.items() if k not in {"SLACK_APP_TOKEN", "CSB_REPO", "CSB_CONFIG"}}
    if socket_mode:
        env["SLACK_APP_TOKEN"] = APP_TOKEN
    config = database.parent / "bench.toml"
    config.write_text(BENCH_CONFIG)
    env.update(
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=slack_api_url,
        CSB_DATABASE_URL=database_url or f"sqlite:///{database}",
        CSB_HARBOR=HARBOR,
        CSB_CONFIG=str(config),
    )
    return env


def serve_argv(role: str, *args: object) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "_serve", role, *map(str, args)]


# -- load -------------------------------------------------------------------------------------------------


class SignedCommands:
    """`/csb run` forms as Slack sends them, each signed with a fresh timestamp as Slack does."""

    def __init__(self, standin_url: str, prefix: str = "bench") -> None:
        self._prefix = prefix  # in each trigger id, which must differ between stand-ins
        self._app = AppContext(
            team_id="T0PLAY", team_domain="csb-playground", app_id="A0CSBBOT", bot_user_id="UCSBBOT"
        )
        self._user = next(user for user in CAST if user.id == REQUESTER)
        self._channel = DEFAULT_CHANNELS[0]
        self._response_url = f"{standin_url}/response/bench"  # never used: a `run` answers with its card
        self._ids = itertools.count(1)

    def form(self) -> dict[str, str]:
        """A command's fields, as an envelope carries them; each has its own trigger id."""
        trigger = f"{next(self._ids)}.{self._prefix}"
        return slash_command_form(
            self._app, self._user, self._channel, "/csb", COMMAND_TEXT, self._response_url, trigger
        )

    def next(self) -> tuple[bytes, dict[str, str]]:
        body = urlencode(self.form())
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": slack_signature(SECRET, stamp, body),
        }
        return body.encode(), headers


@dataclass
class Sample:
    latencies_ms: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)

    def extend(self, other: Sample) -> None:
        self.latencies_ms.extend(other.latencies_ms)
        for key, count in other.failures.items():
            self.failures[key] = self.failures.get(key, 0) + count

    @property
    def non_200(self) -> int:
        return sum(self.failures.values())


async def one_request(
    session: aiohttp.ClientSession, url: str, commands: SignedCommands, sample: Sample
) -> None:
    body, headers = commands.next()  # signed before the clock starts: signing is Slack's cost, not the app's
    started = time.perf_counter()
    try:
        async with session.post(url, data=body, headers=headers) as response:
            await response.read()
            outcome = str(response.status)
    except (aiohttp.ClientError, TimeoutError) as exc:
        outcome = type(exc).__name__
    sample.latencies_ms.append((time.perf_counter() - started) * 1000)
    if outcome != "200":
        sample.failures[outcome] = sample.failures.get(outcome, 0) + 1


async def load(
    session: aiohttp.ClientSession, url: str, commands: SignedCommands, total: int, concurrency: int
) -> Sample:
    """`concurrency` workers each send back to back, so that many requests are in flight until the end.

    This process does not collect garbage while it sends, as `timeit` does not: a full collection walks
    every object it holds and pauses every request in flight at once (45 to 50 ms, measured in a load
    generator holding its imports), a pause of its own that the phase it lands in would count as the
    server's."""
    sample = Sample()
    remaining = iter(range(total))

    async def worker() -> None:
        for _ in remaining:
            await one_request(session, url, commands, sample)

    collecting = gc.isenabled()
    gc.disable()
    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        if collecting:
            gc.enable()
    return sample


# -- waiting ----------------------------------------------------------------------------------------------


async def poll(check: Callable[[], Awaitable[bool]], timeout: float, what: str, child: Child) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if child.process.poll() is not None:
            raise RuntimeError(f"{child.name} exited with {child.process.returncode}:\n{child.tail()}")
        try:
            if await check():
                return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}:\n{child.tail()}")


async def wait_ready(session: aiohttp.ClientSession, url: str, child: Child) -> None:
    async def answers() -> bool:
        async with session.get(url) as response:
            return response.status == 200

    await poll(answers, READY_TIMEOUT, f"{child.name} at {url}", child)


async def standin_stats(session: aiohttp.ClientSession, standin_url: str) -> dict[str, int]:
    async with session.get(f"{standin_url}{STATS_PATH}") as response:
        return dict(await response.json())


async def drain(session: aiohttp.ClientSession, standin_url: str, expected_cards: int, bot: Child) -> float:
    """Wait until the bot posted a card per `/csb run` sent so far; returns how long that took."""
    started = time.perf_counter()

    async def posted() -> bool:
        return (await standin_stats(session, standin_url))["cards"] >= expected_cards

    try:
        await poll(posted, DRAIN_TIMEOUT, f"{expected_cards} cards from the bot", bot)
    except RuntimeError as exc:
        stats = await standin_stats(session, standin_url)
        raise RuntimeError(f"the bot posted {stats['cards']} of {expected_cards} cards; {exc}") from exc
    return time.perf_counter() - started


# -- figures ----------------------------------------------------------------------------------------------

Key = tuple[str, int]
"""(target, concurrency)"""

CONCURRENCIES = (1, 50)
TARGETS = ("bot", "bare")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest rank: the value at or below which q% of requests finished (no interpolation)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def p99(sample: Sample) -> float:
    return percentile(sample.latencies_ms, 99)


def describe(sample: Sample) -> str:
    text = f"n={len(sample.latencies_ms)} p50={percentile(sample.latencies_ms, 50):.1f}ms"
    text += f" p99={p99(sample):.1f}ms"
    return text + (f" failures={sample.failures}" if sample.failures else "")


@dataclass
class Figures:
    """Everything measured: pooled samples per target and concurrency, plus per-round context."""

    pooled: dict[Key, Sample] = field(
        default_factory=lambda: {(t, c): Sample() for c in CONCURRENCIES for t in TARGETS}
    )
    round_ratios: dict[int, list[float]] = field(default_factory=lambda: {c: [] for c in CONCURRENCIES})
    drains: list[float] = field(default_factory=list)
    failed_calls: int = 0
    cpu_sec: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TARGETS, 0.0))
    """Each server's CPU time during its c=50 phases (not the bot's drain after them)."""

    def report(self) -> bool:
        """Print the table and verdict, the c=50 ratio last; True when every request was answered 200."""
        print(f"\n{'target':<7}{'concurrency':>12}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'non-200':>9}")
        for (target, concurrency), sample in self.pooled.items():
            p50, n = percentile(sample.latencies_ms, 50), len(sample.latencies_ms)
            print(f"{target:<7}{concurrency:>12}{n:>7}{p50:>10.1f}{p99(sample):>10.1f}{sample.non_200:>9}")
        non_200 = sum(sample.non_200 for sample in self.pooled.values())
        print(f"\nnon-200 responses: {non_200} (must be 0)")
        print(f"stand-in Web API calls that failed: {self.failed_calls}")
        print(f"bot backlog after each c=50 phase posted within: {_listed(self.drains, 's')}")
        for concurrency, ratios in self.round_ratios.items():
            print(f"per-round p99 ratio at c={concurrency}: {_listed(ratios, '')}")
        for target in TARGETS:  # the bot's includes what of its work after the acks ran during the phase
            sent = len(self.pooled[(target, 50)].latencies_ms)
            print(f"cpu_ms_per_request_c50_{target}={1000 * self.cpu_sec[target] / max(sent, 1):.3f}")
        print(f"load_avg_1m={os.getloadavg()[0]:.1f}")
        ratios = {c: p99(self.pooled[("bot", c)]) / p99(self.pooled[("bare", c)]) for c in CONCURRENCIES}
        verdict = "met" if ratios[50] <= GOAL_RATIO else "NOT met"
        print(f"goal (bot/bare p99 <= {GOAL_RATIO} at concurrency 50): {verdict}")
        print(f"ratio_p99_c1={ratios[1]:.2f}")
        print(f"ratio_p99_c50={ratios[50]:.2f}")
        return non_200 == 0


def cpu_seconds(child: Child) -> float:
    """The process's user and system CPU time so far (Linux `/proc`; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{child.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _listed(values: Sequence[float], unit: str) -> str:
    return ", ".join(f"{value:.2f}{unit}" for value in values)


# -- the run ----------------------------------------------------------------------------------------------


@dataclass
class Targets:
    bot_url: str
    bare_url: str
    standin_url: str
    bot: Child
    bare: Child
    bare_standin_url: str | None = None
    """Socket Mode: the bare app's own stand-in (the bot's is `standin_url`); None: HTTP."""

    def child(self, target: str) -> Child:
        return self.bot if target == "bot" else self.bare

    def url(self, target: str) -> str:
        return self.bot_url if target == "bot" else self.bare_url

    def socket_standin(self, target: str) -> str | None:
        if self.bare_standin_url is None:
            return None
        return self.standin_url if target == "bot" else self.bare_standin_url


async def socket_phase(
    session: aiohttp.ClientSession, standin_url: str, total: int, concurrency: int
) -> Sample:
    """A phase sent by the target's stand-in, over the target's WebSocket; its figures come back."""
    phase = {"total": total, "concurrency": concurrency}
    timeout = aiohttp.ClientTimeout(total=None)  # a phase takes as long as it takes; each envelope is bounded
    async with session.post(f"{standin_url}{LOAD_PATH}", json=phase, timeout=timeout) as response:
        figures = await response.json()
    return Sample(latencies_ms=list(figures["latencies_ms"]), failures=dict(figures["failures"]))


class Bench:
    """Sends the phases in order and keeps count of the cards the bot owes."""

    def __init__(self, session: aiohttp.ClientSession, targets: Targets) -> None:
        self._session = session
        self._targets = targets
        self._commands = SignedCommands(targets.standin_url)
        self._sent_to_bot = 0
        self._phase_cpu: dict[str, float] = {}
        self.figures = Figures()

    async def warm_up(self) -> None:
        """Sequential requests, then a burst that opens the pool's connections; none is counted."""
        for target in TARGETS:
            for total, concurrency in ((WARMUP, 1), (50, 50)):
                sample = await self._phase(target, total, concurrency)
                if sample.non_200:
                    raise RuntimeError(f"warm-up against {target} failed: {sample.failures}")
        self.figures.drains.clear()

    async def run_round(self, number: int, totals: dict[int, int]) -> None:
        for concurrency in CONCURRENCIES:
            samples = {t: await self._phase(t, totals[concurrency], concurrency) for t in TARGETS}
            self.figures.round_ratios[concurrency].append(p99(samples["bot"]) / p99(samples["bare"]))
            for target, sample in samples.items():
                self.figures.pooled[(target, concurrency)].extend(sample)
                if concurrency == 50:
                    self.figures.cpu_sec[target] += self._phase_cpu[target]
                print(f"round {number}: {target:<4} c={concurrency:<2} {describe(sample)}", flush=True)

    async def _phase(self, target: str, total: int, concurrency: int) -> Sample:
        """One target's load; after the bot's, wait out its backlog so it cannot slow the bare app's turn."""
        socket_standin = self._targets.socket_standin(target)
        cpu = cpu_seconds(self._targets.child(target))
        if socket_standin is not None:
            sample = await socket_phase(self._session, socket_standin, total, concurrency)
        else:
            sample = await load(self._session, self._targets.url(target), self._commands, total, concurrency)
        self._phase_cpu[target] = cpu_seconds(self._targets.child(target)) - cpu
        if target == "bot":
            self._sent_to_bot += total
            drained = await drain(
                self._session, self._targets.standin_url, self._sent_to_bot, self._targets.bot
            )
            if concurrency == 50:
                self.figures.drains.append(drained)
        return sample

    async def finish(self) -> None:
        stats = await standin_stats(self._session, self._targets.standin_url)
        self.figures.failed_calls = stats["failed_calls"]


async def measure(targets: Targets, rounds: int, totals: dict[int, int]) -> Figures:
    connector = aiohttp.TCPConnector(limit=100, limit_per_host=0)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        bench = Bench(session, targets)
        await bench.warm_up()
        for number in range(1, rounds + 1):
            await bench.run_round(number, totals)
        await bench.finish()
    return bench.figures


async def start_and_measure(children: Children, args: argparse.Namespace) -> bool:
    print("mode:", "Socket Mode (stand-in send to ack)" if args.socket_mode else "HTTP", flush=True)
    if args.socket_mode:
        targets = await start_socket_mode(children)
    else:
        targets = await start_http(children)
    figures = await measure(targets, args.rounds, {1: args.requests_c1, 50: args.requests})
    return figures.report()


async def start_http(children: Children) -> Targets:
    standin_port, bot_port, bare_port = free_port(), free_port(), free_port()
    standin_url = f"http://{HOST}:{standin_port}"
    standin = children.start("standin", serve_argv("standin", standin_port))
    bare = children.start("bare", serve_argv("bare", bare_port, f"{standin_url}/api/"))
    env = bot_env(f"{standin_url}/api/", children.workdir / "bench.db")
    bot = children.start("bot", [sys.executable, "-m", "bot", "serve", "--port", str(bot_port)], env)
    async with aiohttp.ClientSession() as session:
        await wait_ready(session, f"{standin_url}{STATS_PATH}", standin)
        await wait_ready(session, f"http://{HOST}:{bare_port}/healthz", bare)
        await wait_ready(session, f"http://{HOST}:{bot_port}/healthz", bot)
    return Targets(
        bot_url=f"http://{HOST}:{bot_port}/slack/events",
        bare_url=f"http://{HOST}:{bare_port}/slack/events",
        standin_url=standin_url,
        bot=bot,
        bare=bare,
    )


async def start_socket_mode(children: Children) -> Targets:
    """Five processes: a stand-in per app, the two apps, and this script asking for phases."""
    bot_standin_port, bare_standin_port, bot_port = free_port(), free_port(), free_port()
    bot_standin_url = f"http://{HOST}:{bot_standin_port}"
    bare_standin_url = f"http://{HOST}:{bare_standin_port}"
    bot_standin = children.start("standin", serve_argv("socket-standin", bot_standin_port))
    bare_standin = children.start("bare-standin", serve_argv("socket-standin", bare_standin_port))
    async with aiohttp.ClientSession() as session:
        await wait_ready(session, f"{bot_standin_url}{STATS_PATH}", bot_standin)
        await wait_ready(session, f"{bare_standin_url}{STATS_PATH}", bare_standin)
        bare = children.start("bare", serve_argv("bare-socket", 0, f"{bare_standin_url}/api/"))
        env = bot_env(f"{bot_standin_url}/api/", children.workdir / "bench.db", socket_mode=True)
        bot = children.start("bot", [sys.executable, "-m", "bot", "serve", "--port", str(bot_port)], env)
        await wait_connected(session, bare_standin_url, bare)
        await wait_connected(session, bot_standin_url, bot)
    return Targets(
        bot_url="",
        bare_url="",
        standin_url=bot_standin_url,
        bot=bot,
        bare=bare,
        bare_standin_url=bare_standin_url,
    )


async def wait_connected(session: aiohttp.ClientSession, standin_url: str, child: Child) -> None:
    async def connected() -> bool:
        return (await standin_stats(session, standin_url))["connections"] >= 1

    await poll(connected, READY_TIMEOUT, f"{child.name} to open its WebSocket", child)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--requests", type=int, default=500, help="requests per target per round at c=50")
    parser.add_argument("--requests-c1", type=int, default=100, help="requests per target per round at c=1")
    parser.add_argument(
        "--socket-mode", action="store_true", help="both apps over Socket Mode, each through its own stand-in"
    )
    return parser


def _serve_main(argv: Sequence[str]) -> int:
    role, port, *rest = argv
    if role in ("standin", "socket-standin"):
        _serve_standin(int(port), socket_mode=role == "socket-standin")
    elif role == "bare-socket":
        _serve_bare_socket(rest[0])
    else:
        _serve_bare(int(port), rest[0])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_serve"]:
        return _serve_main(argv[1:])
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` still stops the children
    with running_children() as children:
        ok = asyncio.run(start_and_measure(children, args))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
