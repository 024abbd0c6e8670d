"""The bot as a real process, for the tests that kill, restart or double it: `python -m bot serve` on a
free loopback port with its own log, the Slack stand-in serving its Web API calls in the test, the
example bench copied into the test's folder, and the test's own view of the bots' database.

`world()` yields the set-up; `World.env` is the environment every bot it starts gets (a test may add
to it before `start_bot`). Requests go in through the real HTTP path (`request_and_approve`).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp.test_utils import TestServer
from engine_kit import trial_dirs
from harness import CHANNEL, HARBOR, ROOT, SECRET, TOKEN, copy_bench
from sqlalchemy import select
from store_reads import all_runs
from waiting import until

from bot.playground import APPROVER, REQUESTER, SlackDriver, SlackStandin
from bot.store import lease
from bot.store.db import Store
from bot.store.models import Lane

# A live holder keeps the lease through the stalls of a loaded machine (the ttl is long); a killed one
# loses it at once, since its pid is gone on this host, so the restart does not wait the ttl out.
# The timers tick at their default half second: a lane's exit and a queued message wake a bot at once,
# so a faster tick only costs CPU (at 0.1 s an idle bot took a fifth of a core, 4 s in 20 s; at 0.5 s, 1.1 s).
# A lane claimed by a bot killed before it forked the lane's process waits the spawn grace out before it
# is queued again; a restarted bot takes longer than 2 s to start, by which time whatever the killed bot
# forked has long exec'ed, so the tests do not wait out the default 10 s.
CONFIG = """
[engine]
default_parallel = 4
lease_ttl_sec = 30
retry_backoff_sec = 1
spawn_grace_sec = 2
"""
DEADLINE = 150.0
REPORT = re.compile(r"baseline \d+/\d+")  # the report's totals line


@dataclass
class BotProcess:
    proc: subprocess.Popen[bytes]
    url: str

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


@dataclass
class World:
    tmp: Path
    repo: Path
    store: Store  # the test's own view of the bots' database, for reading
    env: dict[str, str]
    standin: SlackStandin
    slack_url: str
    bots: list[BotProcess]

    async def start_bot(self, prefix: tuple[str, ...] = ()) -> BotProcess:
        """`prefix`: a command the bot runs under, e.g. `unshare` for a PID namespace of its own."""
        port = _free_port()
        log = open(self.tmp / f"bot-{len(self.bots)}.log", "ab")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=self.env,
            cwd=self.tmp,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its process group: the bot and its helpers, ended together at the end
        )
        log.close()
        bot = BotProcess(proc, f"http://127.0.0.1:{port}")
        self.bots.append(bot)
        await until(lambda: _healthy(bot), f"bot on port {port} to answer /healthz")
        return bot

    async def lanes(self) -> list[Lane]:
        async with self.store.read() as session:
            return list((await session.execute(select(Lane).order_by(Lane.id))).scalars())

    async def lane_states(self) -> list[str]:
        return [lane.state.value for lane in await self.lanes()]

    async def run_states(self) -> list[str]:
        return [run.state.value for run in await all_runs(self.store)]

    async def finished(self) -> bool:
        return await self.run_states() == ["finished"]

    async def lease_pid(self) -> int | None:
        async with self.store.read() as session:
            held = await lease.get_lease(session)
        return held.pid if held is not None else None


async def _healthy(bot: BotProcess) -> bool:
    if bot.proc.poll() is not None:
        raise AssertionError(f"the bot exited with {bot.proc.returncode}")
    try:
        async with aiohttp.ClientSession() as session, session.get(f"{bot.url}/healthz") as response:
            return response.status == 200
    except aiohttp.ClientError:
        return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def world(tmp_path: Path, db_url: str, config_text: str = CONFIG) -> AsyncIterator[World]:
    repo = copy_bench(tmp_path)
    config = tmp_path / "csb-bot.toml"
    config.write_text(config_text)
    standin = SlackStandin(bot_token=TOKEN)
    server = TestServer(standin.build_app(), host="127.0.0.1")
    await server.start_server()
    slack_url = str(server.make_url("")).rstrip("/")
    standin.base_url = slack_url
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SLACK_", "CSB_"))}
    env.update(
        SLACK_BOT_TOKEN=TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_API_URL=f"{slack_url}/api/",
        CSB_DATABASE_URL=db_url,
        CSB_REPO=str(repo),
        CSB_HARBOR=str(HARBOR),
        CSB_CONFIG=str(config),
        HARBOR_STANDIN_DELAY="0.7",
        SOURCEGRAPH_ACCESS_TOKEN="sgp_test_not_a_real_token",
        PYTHONPATH=str(ROOT),
    )
    store = Store(db_url)
    await store.create_tables()  # as each bot does at start; the test reads before the first one is up
    state = World(tmp_path, repo, store, env, standin, slack_url, [])
    try:
        yield state
    finally:
        await _end_bots(state.bots)
        _kill_leftover_lanes(repo)
        await store.close()
        await server.close()


async def _end_bots(bots: list[BotProcess]) -> None:
    """SIGKILL each bot's process group (the bot and the helpers it started: the drawing worker and
    multiprocessing's resource tracker; lanes run in sessions of their own, ended by
    `_kill_leftover_lanes`). A test is over: a graceful stop (seconds on a loaded machine, for ticks
    under way) would only delay the next one; `test_restart.py` and the Socket Mode tests stop bots
    with SIGTERM where that is what they test."""
    for bot in bots:
        if bot.proc.poll() is None:  # not reaped yet: its pid, and so its group's id, is still its own
            os.killpg(bot.proc.pid, signal.SIGKILL)
    for bot in bots:
        bot.proc.wait()


def _kill_leftover_lanes(repo: Path) -> None:
    """Lane processes outlive a killed bot by design; a failed test must not leave them behind."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with suppress(OSError):
            if (
                os.readlink(entry / "cwd") == str(repo)
                and b"CSB_BOT_LANE=" in (entry / "environ").read_bytes()
            ):
                os.killpg(int(entry.name), signal.SIGKILL)


async def request_and_approve(w: World, bot: BotProcess, text: str) -> str:
    """Send `/csb <text>` and click Approve on its card; returns the card's ts (its thread's)."""
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        assert (await driver.slash_command(REQUESTER, text)).status == 200
        await until(lambda: w.standin.messages(CHANNEL), "the approval card")
        card = w.standin.messages(CHANNEL)[-1]
        await until(lambda: "Approve" in str(w.standin.message(CHANNEL, card["ts"])), "the Approve button")
        assert (await driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
    return str(card["ts"])


async def every_lane_ran_once(w: World) -> None:
    lanes = await w.lanes()
    assert lanes and all(lane.state.value in ("passed", "failed") for lane in lanes), lanes
    assert len(trial_dirs(w.repo)) == len(lanes), (trial_dirs(w.repo), lanes)
    names = sorted(path.name.rsplit("__", 1)[0] for path in trial_dirs(w.repo))
    # An MCP lane runs a copy of its task named `mcp_<task>_<6>`, as CSB's harness names it.
    expected = sorted(
        (lane.task_id if str(lane.role) == "baseline" else f"mcp_{lane.task_id}_")[:32] for lane in lanes
    )
    assert [name[: len(want)] for name, want in zip(names, expected, strict=True)] == expected
