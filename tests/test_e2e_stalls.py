"""The stall watchdog end to end: a lane whose log and trial folder stop changing is flagged once in its
run's thread with Stop and retry; the click stops it and retries it as an infrastructure failure; a lane
past its share of the time limit is named on the card. The files' times are set by the test and the
clock moved by hand: nothing sleeps for the watchdog."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from harness import CHANNEL, Harness
from test_e2e_accounts import lane_of, lanes_of, of, tick_until
from test_e2e_run import card_text
from test_run_control import (
    PAGE,
    SLUG,
    STAGING_APPROVER_ONLY,
    approved_run,
    audit_trail,
    bot,
    script,
    thread_texts,
)

from bot.domain.outcome import LaneStatus
from bot.playground import OUTSIDER, REQUESTER
from bot.slack.views.events import STOP_AND_RETRY
from bot.store.records import Lane

pytestmark = pytest.mark.slow

WATCHDOG = """
[engine]
stall_after_sec = 600
long_lane_share = 0.05
"""


def quiet_since(h: Harness, lane: Lane, at: datetime) -> None:
    """Set the lane's log and every file of its jobs dir to `at`, as if nothing had been written since."""
    stamp = at.timestamp()
    jobs = h.repo / lane.jobs_dir
    for path in [h.repo / lane.log_path, *jobs.rglob("*")]:
        if path.exists() and (path.suffix != ".log" or path.name == Path(lane.log_path).name):
            os.utime(path, (stamp, stamp), follow_symlinks=False)
    os.utime(jobs, (stamp, stamp))


async def test_a_hung_lane_is_flagged_once_then_stopped_and_retried_from_the_button(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang"})
    async with bot(tmp_path, csb_database_url=db_url, config_text=WATCHDOG + STAGING_APPROVER_ONLY) as h:
        card = await approved_run(h)
        (hung,) = [lane for lane in of(await lanes_of(h), SLUG) if lane.role == "mcp"]
        assert hung.state is LaneStatus.RUNNING
        h.clock.advance(timedelta(minutes=21))  # past 5 % of its 6 h 45 min limit
        # Only this lane's files are old: every other lane wrote "just now" as far as the clock knows.
        others = [
            lane for lane in await lanes_of(h) if lane.id != hung.id and lane.state is LaneStatus.RUNNING
        ]
        future = h.clock.now() + timedelta(days=1)
        for lane in others:
            os.utime(h.repo / lane.log_path, (future.timestamp(), future.timestamp()))
        quiet_since(h, hung, h.clock.now() - timedelta(minutes=10, seconds=30))
        await h.bot.engine.tick()
        await h.deliver()
        await h.bot.engine.tick()  # told once per attempt, not every tick
        await h.deliver()
        notes = [m for m in h.thread(card) if STOP_AND_RETRY in str(m.get("blocks"))]
        (note,) = notes
        assert f"Lane `{SLUG}/mcp` (attempt 1)" in str(note["text"]) and "for 10 min" in str(note["text"])
        current = h.standin.message(CHANNEL, card["ts"])
        assert current is not None
        assert "Near their time limit" in card_text(current) and f"{SLUG}/mcp" in card_text(current)

        await h.driver.click_button(OUTSIDER, CHANNEL, note["ts"], STOP_AND_RETRY)
        await h.deliver()
        assert lane_of(await lanes_of(h), hung).stop_wanted is None  # an outsider's click counts for nothing
        assert "may stop and retry lanes of staging runs" in h.ephemeral_texts(OUTSIDER)[-1]

        await h.driver.click_button(REQUESTER, CHANNEL, note["ts"], STOP_AND_RETRY)
        await h.deliver()
        assert f"stopped 1 lane (`{SLUG}/mcp`) as stalled" in thread_texts(h, card)
        assert any(action == "lane stop and retry" for action, _, _ in await audit_trail(h))
        await tick_until(h, lambda lanes: lane_of(lanes, hung).state is LaneStatus.QUEUED)
        queued = lane_of(await lanes_of(h), hung)
        assert queued.infra_failures == 1 and queued.reason is not None and "stalled" in queued.reason
        h.clock.advance(timedelta(seconds=31))  # the retry's backoff
        await tick_until(h, lambda lanes: lane_of(lanes, hung).state is LaneStatus.RUNNING)
        again = lane_of(await lanes_of(h), hung)
        assert again.attempt == 2 and again.stall_noted == 1  # the new attempt may be flagged afresh

        await h.driver.slash_command(REQUESTER, "cancel 1 done")
        await h.deliver()
        await tick_until(h, lambda lanes: all(lane.state.is_final for lane in lanes), patience=120)
