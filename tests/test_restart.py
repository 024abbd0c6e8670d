"""The bot as a real process: killed with SIGKILL mid-run and restarted, and two of them on one SQLite
file. Requests go in through the real HTTP path (a signed slash command, an Approve click); the Slack
stand-in runs in the test. Every lane must run exactly once.

These tests watch a real process with real timers, so they poll the database until a deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from engine_kit import trial_dirs
from harness import CHANNEL, HARBOR, ROOT, SECRET, TOKEN, copy_bench
from waiting import until

from bot.playground import APPROVER, REQUESTER, SlackDriver, SlackStandin

pytestmark = pytest.mark.slow

# A live holder keeps the lease through the stalls of a loaded machine (the ttl is long); a killed one
# loses it at once, since its pid is gone on this host, so the restart does not wait the ttl out.
CONFIG = """
[engine]
tick_seconds = 0.1
default_parallel = 4
lease_ttl_sec = 30
retry_backoff_sec = 1

[notifier]
tick_seconds = 0.1
"""


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
    db: Path
    env: dict[str, str]
    standin: SlackStandin
    slack_url: str
    bots: list[BotProcess]

    async def start_bot(self) -> BotProcess:
        port = _free_port()
        log = open(self.tmp / f"bot-{len(self.bots)}.log", "ab")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=self.env,
            cwd=self.tmp,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        bot = BotProcess(proc, f"http://127.0.0.1:{port}")
        self.bots.append(bot)
        await until(lambda: _healthy(bot), f"bot on port {port} to answer /healthz")
        return bot

    def query(self, sql: str) -> list[tuple[object, ...]]:
        with sqlite3.connect(self.db) as conn:
            return list(conn.execute(sql))

    def lane_states(self) -> list[str]:
        return [str(row[0]).lower() for row in self.query("select state from lanes")]

    def run_states(self) -> list[str]:
        return [str(row[0]).lower() for row in self.query("select state from runs")]


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
async def world(tmp_path: Path) -> AsyncIterator[World]:
    repo = copy_bench(tmp_path)
    config = tmp_path / "csb-bot.toml"
    config.write_text(CONFIG)
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
        CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'bot.db'}",
        CSB_REPO=str(repo),
        CSB_HARBOR=str(HARBOR),
        CSB_CONFIG=str(config),
        CSB_STANDIN_DELAY="0.7",
        SOURCEGRAPH_ACCESS_TOKEN="sgp_test_not_a_real_token",
        PYTHONPATH=str(ROOT),
    )
    state = World(tmp_path, repo, tmp_path / "bot.db", env, standin, slack_url, [])
    try:
        yield state
    finally:
        for bot in state.bots:
            if bot.proc.poll() is None:
                bot.proc.terminate()
                with suppress(subprocess.TimeoutExpired):
                    bot.proc.wait(timeout=10)
        _kill_leftover_lanes(repo)
        await server.close()


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


async def request_and_approve(w: World, bot: BotProcess, text: str) -> None:
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        assert (await driver.slash_command(REQUESTER, text)).status == 200
        await until(lambda: w.standin.messages(CHANNEL), "the approval card")
        card = w.standin.messages(CHANNEL)[-1]
        await until(lambda: "Approve" in str(w.standin.message(CHANNEL, card["ts"])), "the Approve button")
        assert (await driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200


def every_lane_ran_once(w: World) -> None:
    lanes = w.query("select task_id, role, lower(state) from lanes")
    assert lanes and all(state in ("passed", "failed") for _, _, state in lanes), lanes
    assert len(trial_dirs(w.repo)) == len(lanes), (
        [str(p.relative_to(w.repo)) for p in trial_dirs(w.repo)],
        lanes,
    )
    names = sorted(path.name.rsplit("__", 1)[0] for path in trial_dirs(w.repo))
    # An MCP lane runs a copy of its task named `mcp_<task>_<6>`, as CSB's harness names it.
    expected = sorted((task if role == "baseline" else f"mcp_{task}_")[:32] for task, role, _ in lanes)
    assert [name[: len(want)] for name, want in zip(names, expected, strict=True)] == expected


async def test_kill_9_mid_run_then_restart_runs_every_lane_once(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        first = await w.start_bot()
        await request_and_approve(w, first, "run --parallel 4")
        await until(
            lambda: (
                w.lane_states().count("running") >= 2
                and sum(s in ("passed", "failed") for s in w.lane_states()) >= 2
            ),
            "some lanes to finish while others run",
        )
        first.kill()
        running_when_killed = w.lane_states().count("running")
        assert running_when_killed >= 1

        await w.start_bot()
        await until(lambda: w.run_states() == ["finished"], "the run to finish")
        every_lane_ran_once(w)
        assert len(w.lane_states()) == 14  # all seven tasks of the example bench, both lanes


async def test_two_bots_on_one_database_launch_each_lane_once(tmp_path: Path) -> None:
    async with world(tmp_path) as w:
        bots = [await w.start_bot(), await w.start_bot()]
        await until(lambda: w.query("select pid from leases"), "one bot to take the lease")
        ((holder_pid,),) = w.query("select pid from leases")
        holder = next(bot for bot in bots if bot.proc.pid == holder_pid)
        other = next(bot for bot in bots if bot is not holder)
        await request_and_approve(w, other, "run csb_sdlc_debug --parallel 6")
        await until(lambda: w.run_states() == ["finished"], "the run to finish")
        every_lane_ran_once(w)
        assert {pid for (pid,) in w.query("select distinct pid from leases")} == {holder.proc.pid}
        assert all(bot.proc.poll() is None for bot in bots)
