"""The bot as a real process: killed with SIGKILL mid-run and restarted, two of them on one database
(SQLite and PostgreSQL), the one holding the timers killed or stopped while the other carries on.
Requests go in through the real HTTP path (a signed slash command, an Approve click); the Slack stand-in
runs in the test. Every lane must run exactly once.

These tests watch a real process with real timers, so they poll the database until a deadline.
"""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from bot_process import (
    CONFIG,
    DEADLINE,
    REPORT,
    BotProcess,
    World,
    every_lane_ran_once,
    request_and_approve,
    world,
)
from harness import CHANNEL, SECRET
from postgres_cluster import Cluster
from waiting import until

from bot.playground import APPROVER, REQUESTER, SlackDriver
from bot.store import approvals, lease

pytestmark = pytest.mark.slow


async def some_finished_some_running(w: World) -> bool:
    states = await w.lane_states()
    return states.count("running") >= 2 and sum(s in ("passed", "failed") for s in states) >= 2


async def test_kill_9_mid_run_then_restart_runs_every_lane_once(tmp_path: Path, db_url: str) -> None:
    async with world(tmp_path, db_url) as w:
        first = await w.start_bot()
        await request_and_approve(w, first, "run --parallel 4")
        await until(lambda: some_finished_some_running(w), "some lanes to finish while others run")
        first.kill()
        running_when_killed = (await w.lane_states()).count("running")
        assert running_when_killed >= 1

        await w.start_bot()
        await until(w.finished, "the run to finish")
        await every_lane_ran_once(w)
        assert len(await w.lane_states()) == 14  # all seven tasks of the example bench, both lanes


async def test_two_bots_on_one_database_launch_each_lane_once(tmp_path: Path, db_url: str) -> None:
    async with world(tmp_path, db_url) as w:
        bots = [await w.start_bot(), await w.start_bot()]
        await until(w.lease_pid, "one bot to take the lease")
        holder_pid = await w.lease_pid()
        holder = next(bot for bot in bots if bot.proc.pid == holder_pid)
        other = next(bot for bot in bots if bot is not holder)
        await request_and_approve(w, other, "run csb_sdlc_debug --parallel 6")
        await until(w.finished, "the run to finish")
        await every_lane_ran_once(w)
        assert await w.lease_pid() == holder.proc.pid
        assert all(bot.proc.poll() is None for bot in bots)


async def test_the_timer_holder_killed_mid_run_the_other_bot_finishes_every_lane_once(
    tmp_path: Path, db_url: str
) -> None:
    """Two bots started together on one fresh database; the click reaches both; the one holding the
    timers is SIGKILLed with lanes running. The other takes the lease, re-attaches the lanes the dead
    one started (same host: by their markers), starts the rest, never more than --parallel at once,
    and posts the report once."""
    async with world(tmp_path, db_url) as w:
        bots = list(await asyncio.gather(w.start_bot(), w.start_bot()))
        await until(w.lease_pid, "one bot to take the lease")
        holder_pid = await w.lease_pid()
        holder = next(bot for bot in bots if bot.proc.pid == holder_pid)
        other = next(bot for bot in bots if bot is not holder)
        most_running = 0

        async def watch_parallel() -> None:
            """A lane runs for at least HARBOR_STANDIN_DELAY (0.7 s): a look every 0.2 s sees every
            lane that ran, for a fraction of the reads of the database one every 0.02 s made."""
            nonlocal most_running
            while True:
                most_running = max(most_running, (await w.lane_states()).count("running"))
                await asyncio.sleep(0.2)

        watcher = asyncio.create_task(watch_parallel())
        try:
            async with SlackDriver(f"{holder.url}/slack/events", SECRET, w.standin, w.slack_url) as first:
                assert (await first.slash_command(REQUESTER, "run --parallel 3")).status == 200
            await until(lambda: w.standin.messages(CHANNEL), "the approval card")
            card = w.standin.messages(CHANNEL)[-1]
            await until(
                lambda: "Approve" in str(w.standin.message(CHANNEL, card["ts"])), "the Approve button"
            )
            async with (
                SlackDriver(f"{holder.url}/slack/events", SECRET, w.standin, w.slack_url) as one,
                SlackDriver(f"{other.url}/slack/events", SECRET, w.standin, w.slack_url) as two,
            ):  # the same click delivered to both processes at once, as a retry after a slow ack would be
                clicks = await asyncio.gather(
                    one.click_button(APPROVER, CHANNEL, card["ts"], "Approve"),
                    two.click_button(APPROVER, CHANNEL, card["ts"], "Approve"),
                )
            assert [click.status for click in clicks] == [200, 200]
            await until(lambda: some_finished_some_running(w), "some lanes to finish while others run")
            holder.kill()
            await until(lambda: _held_by(w, other), "the other bot to take the timers")
            await until(w.finished, "the run to finish")
        finally:
            watcher.cancel()
        await every_lane_ran_once(w)
        assert len(await w.lane_states()) == 14
        assert most_running <= 3
        async with w.store.read() as session:
            assert await approvals.approvers(session, 1, 1) == [APPROVER]

        def reports() -> list[dict[str, Any]]:
            return [m for m in w.standin.thread(CHANNEL, card["ts"]) if REPORT.search(str(m))]

        await until(reports, "the report in the card's thread")
        assert len(reports()) == 1


async def _held_by(w: World, bot: BotProcess) -> bool:
    return await w.lease_pid() == bot.proc.pid


async def test_a_stopped_bot_lets_go_of_the_timers_at_once(tmp_path: Path, db_url: str) -> None:
    """SIGTERM (a deploy): the bot expires its own lease before it exits, so a replica on another host
    takes the timers at its next tick instead of waiting out the lease time (here two minutes)."""
    async with world(tmp_path, db_url, CONFIG.replace("lease_ttl_sec = 30", "lease_ttl_sec = 120")) as w:
        bot = await w.start_bot()
        await until(w.lease_pid, "the bot to take the lease")
        bot.proc.send_signal(signal.SIGTERM)
        assert bot.proc.wait(timeout=DEADLINE) == 0
        async with w.store.read() as session:
            held = await lease.get_lease(session)
        assert held is not None and held.expires_at <= datetime.now(UTC)


async def test_the_database_away_mid_run_stops_nothing_for_good(
    tmp_path: Path, postgres: Cluster | None
) -> None:
    """PostgreSQL refuses the bot's database for a while, then restarts, with lanes running. Meanwhile
    /healthz says 503 and a command is still acked and answered; afterwards the timers resume and every
    lane has run once, none lost and none started twice."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database()
    async with world(tmp_path, url) as w:
        bot = await w.start_bot()
        await request_and_approve(w, bot, "run --parallel 4")
        await until(lambda: some_finished_some_running(w), "some lanes to finish while others run")
        postgres.admit(url, allowed=False)
        try:
            await until(lambda: _health(bot, 503), "/healthz to say the database is away")
            async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
                started = asyncio.get_running_loop().time()
                assert (await driver.slash_command(REQUESTER, "status")).status == 200
                assert asyncio.get_running_loop().time() - started < 3.0

            def told_to_retry() -> bool:
                return any("try again in a minute" in str(reply) for reply in w.standin.ephemerals(REQUESTER))

            await until(told_to_retry, "the reply that the database is away")
            postgres.restart()
        finally:
            postgres.admit(url, allowed=True)
        await until(lambda: _health(bot, 200), "/healthz to say the database is back")
        await until(w.finished, "the run to finish")
        await every_lane_ran_once(w)
        assert len(await w.lane_states()) == 14
        assert bot.proc.poll() is None


async def _health(bot: BotProcess, status: int) -> bool:
    async with aiohttp.ClientSession() as session, session.get(f"{bot.url}/healthz") as response:
        return response.status == status
