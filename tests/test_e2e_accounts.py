"""`/csb accounts`, `/csb drain-account` and `/csb undrain-account` end to end: signed commands over HTTP,
the Slack stand-in, a real database and the example bench's Harbor stand-in as real child processes;
account homes and CSB's usage cache under the bot's HOME, the clock moved by hand."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from engine_kit import make_accounts
from harness import Harness, running_bot
from idle import run_until_idle
from lane_waits import kill_all, running_count, wait_any
from test_run_control import MERGE, SLUG, approved_run, script, thread_texts

from bot.domain.outcome import LaneStatus
from bot.playground import ADMIN, APPROVER, REQUESTER
from bot.store import accounts, runs
from bot.store.models import RunState
from bot.store.records import Lane

pytestmark = pytest.mark.slow

ADMINS = f"""
[policy]
admins = ["{ADMIN}"]
"""


def write_usage(home: Path, utilisation: dict[str, float], fetched_at: datetime) -> None:
    """CSB's usage cache in fetch_usage.py's shape (see tests/fixtures/csb/usage_cache.json)."""
    entries = [
        {
            "name": name,
            "five_hour": {"utilization": used, "resets_at": None},
            "seven_day": {"utilization": 12.5, "resets_at": None},
            "fetched_at": fetched_at.isoformat(),
            "error": None,
        }
        for name, used in utilisation.items()
    ]
    path = home / ".claude-usage" / "usage_cache.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"accounts": entries, "fetched_at": fetched_at.isoformat()}))


@asynccontextmanager
async def bot_with_accounts(tmp_path: Path, *names: str, **overrides: Any) -> AsyncIterator[Harness]:
    """The bot with account homes `names` under its HOME; lanes left hanging are killed on failure."""
    homes = make_accounts(tmp_path, *names)
    home = homes.parent
    async with running_bot(tmp_path, environ={"HOME": str(home)}, config_text=ADMINS, **overrides) as h:
        try:
            yield h
        except BaseException:
            await kill_all(h.bot.engine, h.bot.store)
            raise


async def lanes_of(h: Harness, run_id: int = 1) -> list[Lane]:
    async with h.bot.store.read() as session:
        return await runs.run_lanes(session, run_id)


def name(lane: Lane) -> str:
    return Path(lane.account or "").name


async def test_accounts_shows_token_lanes_and_utilisation_and_labels_a_stale_cache(
    tmp_path: Path, db_url: str
) -> None:
    async with bot_with_accounts(tmp_path, "account1", "account2", csb_database_url=db_url) as h:
        home = tmp_path / "home"
        write_usage(home, {"account1": 97.0, "account2": 20.0}, h.clock.now() - timedelta(minutes=3))
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        reply = h.ephemeral_texts(REQUESTER)[-1]
        lines = reply.splitlines()
        (first,) = [line for line in lines if "`account1`" in line]
        assert "at or above the utilisation limit (97.0% 5-hour, 12.5% 7-day)" in first
        assert "token 7 d left" in first and "0 lanes running" in first
        assert "5-hour 97.0%, 7-day 12.5%" in first
        (second,) = [line for line in lines if "`account2`" in line]
        assert "takes new lanes" in second and "5-hour 20.0%, 7-day 12.5%" in second
        assert "Usage cache: fetched 3 min ago; new lanes avoid an account at or above 95%" in reply
        assert "no `scripts/infra/account_health.py`" in reply  # CSB's own verdict, as before

        h.clock.advance(timedelta(hours=2))  # the cache is now older than usage_stale_sec (1 h)
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        reply = h.ephemeral_texts(REQUESTER)[-1]
        assert "Usage cache: :warning: *stale*, fetched 2 h 3 min ago, so not used" in reply
        assert "5-hour 97.0%, 7-day 12.5% (*stale*, not used)" in reply
        assert "`account1`: takes new lanes" in reply  # a stale figure holds nothing back

        (home / ".claude-usage" / "usage_cache.json").write_text("[]")
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        reply = h.ephemeral_texts(REQUESTER)[-1]
        assert "utilisation unknown (the usage cache is not fetch_usage.py's shape" in reply


async def test_an_account_drained_mid_run_takes_no_new_lane_and_stop_moves_its_lanes(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang"})
    monkeypatch.setenv("HARBOR_STANDIN_DELAY", "0.3")
    async with bot_with_accounts(tmp_path, "account1", "account2", csb_database_url=db_url) as h:
        card = await approved_run(h)  # 4 slots: two pairs start, one lane of each pair on each account
        running = [lane for lane in await lanes_of(h) if lane.state is LaneStatus.RUNNING]
        assert sorted(name(lane) for lane in running) == ["account1", "account1", "account2", "account2"]

        await h.driver.slash_command(REQUESTER, "drain-account account1")
        await h.deliver()
        assert "only the admins may drain an account" in h.ephemeral_texts(REQUESTER)[-1]
        await h.driver.slash_command(ADMIN, "drain-account account9")
        await h.deliver()
        assert (
            "there is no account `account9`; the accounts are: `account1`, `account2`"
            in (h.ephemeral_texts(ADMIN)[-1])
        )

        await h.driver.slash_command(ADMIN, "drain-account account1")
        await h.deliver()
        assert "Account `account1` is drained: no new lane starts on it." in h.ephemeral_texts(ADMIN)[-1]
        # Lanes already on it go on; the pair started after the drain runs on account2 alone.
        await tick_until(h, lambda lanes: all(lane.state.is_final for lane in of(lanes, MERGE)))
        assert {name(lane) for lane in of(await lanes_of(h), MERGE)} == {"account2"}
        hung = of(await lanes_of(h), SLUG)
        assert sorted(name(lane) for lane in hung) == ["account1", "account2"]  # still running there
        assert {lane.state for lane in hung} == {LaneStatus.RUNNING}

        await h.driver.slash_command(ADMIN, "drain-account account1 --stop")
        await h.deliver()
        reply = h.ephemeral_texts(ADMIN)[-1]
        assert "Account `account1` was already drained." in reply
        assert "1 running lane will be stopped and retried elsewhere" in reply and SLUG in reply
        (moved,) = [lane for lane in hung if name(lane) == "account1"]
        await tick_until(h, lambda lanes: lane_of(lanes, moved).state is LaneStatus.QUEUED)
        h.clock.advance(timedelta(seconds=31))  # the retry's backoff
        await tick_until(h, lambda lanes: lane_of(lanes, moved).state is LaneStatus.RUNNING)
        again = lane_of(await lanes_of(h), moved)
        assert name(again) == "account2"
        assert again.attempt == moved.attempt + 1 and again.infra_failures == moved.infra_failures + 1
        assert "to move off the drained account `account1`" in thread_texts(h, card)
        async with h.bot.store.read() as session:
            run = await runs.get_run(session, 1)
        assert run is not None and run.state is RunState.RUNNING and run.infra_failures == 0  # no pause

        await h.driver.slash_command(ADMIN, "undrain-account account1")
        await h.deliver()
        assert "Account `account1` takes new lanes again." in h.ephemeral_texts(ADMIN)[-1]
        async with h.bot.store.read() as session:
            trail = [(e.action, e.actor) for e in reversed(await accounts.last_events(session))]
        assert trail == [("drained", ADMIN), ("lanes stopped", ADMIN), ("undrained", ADMIN)]
        await h.driver.slash_command(APPROVER, "accounts")
        await h.deliver()
        assert f"*undrained* by <@{ADMIN}>" in h.ephemeral_texts(APPROVER)[-1]
        await h.driver.slash_command(REQUESTER, "cancel 1 done")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)


def of(lanes: list[Lane], task: str) -> list[Lane]:
    return [lane for lane in lanes if lane.task_id == task]


def lane_of(lanes: list[Lane], lane: Lane) -> Lane:
    return next(found for found in lanes if found.id == lane.id)


async def tick_until(h: Harness, done: Callable[[list[Lane]], bool], patience: float = 60) -> None:
    """Tick (and deliver) until `done` holds for the run's lanes, waiting for lane exits in between; lanes
    that hang by design never end, so this, not `run_until_idle`, drives a run that keeps some."""
    for _ in range(200):
        await h.bot.engine.tick()
        await h.deliver()
        if done(await lanes_of(h)):
            return
        if running_count(h.bot.engine.executor):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wait_any(h.bot.engine.executor), 1.0)
    raise AssertionError(f"not reached within 200 ticks: {await lanes_of(h)}")
