"""A Web API answer cut off halfway (typed as JSON, unreadable as JSON: a connection dropped mid-body) is a
failed call, retried as a missing `ts` is: the card is posted once, its edits land, nothing is set aside."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from test_delivery import card_ts, keys_posted, request_card_through, set_aside
from test_e2e_run import card_text
from test_e2e_status import settle

from bot.playground import APPROVER

pytestmark = pytest.mark.slow


async def test_a_truncated_answer_is_retried_and_the_card_is_posted_once(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        h.standin.answer_badly("chat.postMessage", "truncated", after_store=True)  # posted, answer lost
        h.standin.answer_badly("chat.update", "truncated", after_store=False)
        card = await request_card_through(h, "run csb_sdlc_fix")
        assert keys_posted(h) == ["card:1"]
        assert await card_ts(h.bot.store) == card["ts"]
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await settle(h)  # delivers, moving the clock past the edit's backoff
        assert "Approved" in card_text(h.standin.message(CHANNEL, card["ts"]) or {})
        assert await set_aside(h.bot.store) == []
