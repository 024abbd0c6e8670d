"""End to end: with the database locked by another process, a command is still acked at once and
answered, never silently dropped."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from harness import Harness, running_bot

from bot.playground import APPROVER, REQUESTER

pytestmark = pytest.mark.slow


async def replies_of(h: Harness, user: str, count: int, within: float = 60.0) -> list[str]:
    """Poll the Slack stand-in (not the bot's database, which is locked) until `count` replies came."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        texts = h.ephemeral_texts(user)
        if len(texts) >= count:
            return texts
        await asyncio.sleep(0.1)
    raise AssertionError(f"{user} got {h.ephemeral_texts(user)} within {within} s, wanted {count} replies")


async def test_locked_database_acks_fast_and_answers_busy(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        lock = sqlite3.connect(tmp_path / "bot.db", timeout=0, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")  # another process holds the write lock for longer than the bot waits
        try:
            started = time.monotonic()
            run = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
            helped = await h.driver.slash_command(APPROVER, "help")
            assert run.status == helped.status == 200
            assert time.monotonic() - started < 3.0  # both acked well inside Slack's 3 s
            (busy,) = await replies_of(h, REQUESTER, 1)
            (help_text,) = await replies_of(h, APPROVER, 1)
        finally:
            lock.rollback()
            lock.close()
        assert "busy" in busy and "try again in a moment" in busy
        assert "/csb run" in help_text and "/csb status" in help_text  # the answer itself got through
        await h.bot.inflight.wait_idle()
        with sqlite3.connect(tmp_path / "bot.db") as db:
            assert db.execute("select count(*) from run_requests").fetchone()[0] == 0  # told, not done
