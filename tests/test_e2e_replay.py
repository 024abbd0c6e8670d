"""End to end: a signed click or modal submit replayed within Slack's five-minute window is recognised
and ignored, by every bot process sharing the database."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from idle import run_until_idle
from test_e2e_run import card_text, request_card
from test_race_guards import open_modal, request_row, submit_edit, submit_reject
from test_run_control import MERGE, PAGE, SLUG, approved_run, bot, modal_values, script, thread_texts

from bot.domain.clock import ManualClock
from bot.playground import APPROVER, OUTSIDER, REQUESTER
from bot.playground.driver import DriverResponse
from bot.services.replays import ReplayGuard
from bot.store import audit, requests
from bot.store.db import Store

pytestmark = pytest.mark.slow


async def test_a_replayed_click_is_ignored_and_a_new_click_is_not(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        now = float(int(time.time()))  # read once: a second ticking between two sends made a new click
        h.driver.time_fn = lambda: now + 0.25  # the same signed body, twice
        for _ in range(2):
            assert (await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")).status == 200
            await h.deliver()
        assert len(h.standin.views) == 1  # one modal, not two

        for _ in range(2):
            await h.driver.click(OUTSIDER, CHANNEL, card["ts"], "approval.approve", value="x")
            await h.deliver()
        assert len(h.ephemeral_texts(OUTSIDER)) == 1  # the forged value is answered once

        h.driver.time_fn = lambda: now + 0.5  # a new click
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


class Recorded:
    """The driver's wire, recorded: the last signed body it sent can be sent again byte for byte."""

    def __init__(self, h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        self._post = h.driver.post
        self.bodies: list[tuple[str, str]] = []
        now = float(int(time.time()))
        h.driver.time_fn = lambda: now  # same timestamp, so the same signature: a captured request
        monkeypatch.setattr(h.driver, "post", self._record)

    async def _record(self, body: str, content_type: str, **options: Any) -> DriverResponse:
        self.bodies.append((body, content_type))
        return await self._post(body, content_type, **options)

    async def replay_last(self) -> DriverResponse:
        return await self._post(*self.bodies[-1])


async def audit_actions(h: Harness, request_id: int = 1) -> list[str]:
    async with h.bot.store.read() as session:
        return [event.action for event in await audit.events_for(session, request_id)]


async def test_a_replayed_reject_submit_is_acted_on_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        wire = Recorded(h, monkeypatch)
        view_id = await open_modal(h, APPROVER, card, "Reject")
        await submit_reject(h, APPROVER, view_id, "not this week")
        await h.deliver()
        assert "Rejected" in card_text(h.standin.message(CHANNEL, card["ts"]) or {})
        for _ in range(2):  # Slack's retry, then someone holding the captured body
            assert (await wire.replay_last()).status == 200
            await h.deliver()
        assert h.ephemeral_texts(APPROVER) == []  # not even "already rejected"
        assert (await audit_actions(h)).count("rejected") == 1


async def test_a_replayed_edit_submit_is_acted_on_once_and_other_values_are_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        wire = Recorded(h, monkeypatch)
        view_id = await open_modal(h, REQUESTER, card, "Edit")
        await submit_edit(h, REQUESTER, view_id, 2)
        await h.deliver()
        assert (await request_row(h)).revision == 2
        assert (await wire.replay_last()).status == 200
        await h.deliver()
        assert h.ephemeral_texts(REQUESTER) == []  # not "this card is out of date"
        assert (await request_row(h)).revision == 2

        card = h.standin.message(CHANNEL, card["ts"]) or {}
        h.driver.time_fn = lambda: float(int(time.time())) + 0.5  # a later click (the replay was at .0)
        view_id = await open_modal(h, REQUESTER, card, "Edit")  # the same person, a new modal
        await submit_edit(h, REQUESTER, view_id, 2)
        await h.deliver()
        assert (await request_row(h)).revision == 3


async def test_a_replayed_cancel_submit_is_acted_on_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    async with bot(tmp_path) as h:
        card = await approved_run(h)
        wire = Recorded(h, monkeypatch)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Cancel")
        await h.deliver()
        (view_id,) = h.standin.views
        assert (await h.driver.submit_view(REQUESTER, view_id, modal_values("cancel", "wrong"))).status == 200
        await h.deliver()
        assert (await wire.replay_last()).status == 200
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert h.ephemeral_texts(REQUESTER) == []
        assert (await audit_actions(h)).count("cancel requested") == 1
        assert thread_texts(h, card).count("cancelled run #1: wrong") == 1


async def test_a_rerun_command_sent_five_times_makes_one_request_and_one_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/csb rerun` is deduplicated as `/csb run` is: by the slash command's own `trigger_id`."""
    script(tmp_path, monkeypatch, {f"{PAGE}/mcp": "error"})
    async with bot(tmp_path) as h:
        await approved_run(h)
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        cards_before = len(h.cards())
        wire = Recorded(h, monkeypatch)
        assert (await h.driver.slash_command(REQUESTER, "rerun 1")).status == 200
        answers = await asyncio.gather(*(wire.replay_last() for _ in range(4)))  # at once, as a burst
        assert [answer.status for answer in answers] == [200] * 4
        await h.deliver()
        assert len(h.cards()) == cards_before + 1, [card_text(card) for card in h.cards()]
        async with h.bot.store.read() as session:
            assert await requests.get_request(session, 3) is None
        assert (await audit_actions(h)).count("rerun requested") == 1
        assert h.ephemeral_texts(REQUESTER) == []
