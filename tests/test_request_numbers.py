"""Request numbers are what people see: deliveries of one slash command (Slack sends it again, or two
bot processes both receive it) make one request and spend no number, on either database. On PostgreSQL
an insert the unique index refuses still takes a sequence value, so the next request was #3, not #2."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from harness import running_bot
from store_reads import request_count
from test_e2e_run import card_text

from bot.playground import REQUESTER

pytestmark = pytest.mark.slow


async def test_duplicate_deliveries_never_make_numbers_jump(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        trigger = h.standin.issue_trigger_id(REQUESTER)
        answers = await asyncio.gather(
            *(h.driver.slash_command(REQUESTER, "run csb_sdlc_fix", trigger_id=trigger) for _ in range(3))
        )
        assert [answer.status for answer in answers] == [200, 200, 200]
        await h.deliver()
        again = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix", trigger_id=trigger)
        assert again.status == 200
        await h.deliver()
        assert await request_count(h.bot.store) == 1
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_debug")
        await h.deliver()
        assert await request_count(h.bot.store) == 2
        assert "CSB run request #2" in card_text(h.last_card())
