"""End to end: a signed click replayed within Slack's five-minute window is recognised and ignored,
by every bot process sharing the database."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from test_e2e_run import request_card

from bot.domain.clock import ManualClock
from bot.playground import OUTSIDER, REQUESTER
from bot.services.replays import ReplayGuard
from bot.store.db import Store

pytestmark = pytest.mark.slow


async def test_a_replayed_click_is_ignored_and_a_new_click_is_not(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        h.driver.time_fn = lambda: float(int(time.time())) + 0.25  # the same signed body, twice
        for _ in range(2):
            assert (await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")).status == 200
            await h.deliver()
        assert len(h.standin.views) == 1  # one modal, not two

        for _ in range(2):
            await h.driver.click(OUTSIDER, CHANNEL, card["ts"], "approval.approve", value="x")
            await h.deliver()
        assert len(h.ephemeral_texts(OUTSIDER)) == 1  # the forged value is answered once

        h.driver.time_fn = lambda: float(int(time.time())) + 0.5  # a new click
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")
        await h.deliver()
        assert len(h.standin.views) == 2


async def test_two_processes_agree_on_a_replay_and_old_keys_are_forgotten(db_url: str) -> None:
    one, two = Store(db_url), Store(db_url)
    await one.create_tables()
    clock = ManualClock()
    try:
        first, second = ReplayGuard(one, clock), ReplayGuard(two, clock)
        assert await first.first_time("U0ALICE", "approval.approve", "1700000000.000100")
        assert not await second.first_time("U0ALICE", "approval.approve", "1700000000.000100")
        assert await second.first_time("U0BOB", "approval.approve", "1700000000.000100")
        assert await second.first_time("U0ALICE", "approval.approve", "1700000000.000200")
        assert await first.first_time("U0ALICE", "approval.edit", "not-a-number")  # odd, but harmless
        clock.advance(timedelta(minutes=11))  # past the window: the signature is refused before this
        assert await first.first_time("U0ALICE", "approval.approve", "1700000000.000100")
    finally:
        await one.close()
        await two.close()
