"""A run's thread reads in the order things happened, also when a card redraw reads the run just before
its last lane ends and writes the milestone it saw after the run closed (seen in 1 of 5 playground runs:
"85 % done" after the report). The test interleaves the two at that point instead of hoping for it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from harness import Harness, running_bot
from idle import run_until_idle
from lane_waits import running_count, wait_any
from test_e2e_status import approved_run, thread_texts

from bot.domain.clock import ManualClock
from bot.slack.outbound import render
from bot.slack.outbound.followups import Followups
from bot.slack.views.run_card import RunCardView
from bot.store import outbox

pytestmark = pytest.mark.slow


async def run_until_pairs_done(h: Harness, pairs: int) -> RunCardView:
    """Tick the engine, delivering nothing, until `pairs` pairs are done; the card as a redraw reads it."""
    for _ in range(500):
        await h.bot.engine.tick()
        async with h.bot.store.read() as session:
            view = await render.load_run_card(session, 1, h.clock.now())
        assert view is not None
        if view.pairs_done >= pairs:
            return view
        if running_count(h.bot.engine.executor):
            await wait_any(h.bot.engine.executor)
    raise AssertionError(f"{pairs} pairs never finished")


async def test_a_redraw_read_before_the_close_never_puts_a_milestone_after_the_report(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h, "run csb_sdlc_fix --parallel 2")  # three pairs, one at a time
        stale = await run_until_pairs_done(h, 2)  # the notifier's redraw reads the run here ...
        assert stale.pairs_done == 2 and stale.finished_at is None and stale.progress_at is not None
        await run_until_idle(h.bot.engine, h.bot.store)  # ... the last pair ends and the run closes ...
        async with h.bot.store.read() as session:
            assert await outbox.exists(session, "summary:1")
        h.clock.advance(timedelta(seconds=5))
        await Followups(h.bot.store, h.clock).queue_milestones(1, stale, 0)  # ... and then writes
        await h.deliver()

        texts = thread_texts(h, card)
        assert "Run #1 started." in texts[0]
        assert "Run #1 report" in texts[-1] and "MCP-only wins" in texts[-1], texts
        assert not any("% done" in text for text in texts), texts  # the close came first: news no more


async def test_a_milestone_written_before_the_close_but_after_its_time_still_precedes_the_report(
    tmp_path: Path, db_url: str
) -> None:
    """The redraw's write wins the race to the database, later by the clock than the close's tick: the
    note is dated when the pairs it counts were done, so the report still waits for it."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h, "run csb_sdlc_fix --parallel 2")
        stale = await run_until_pairs_done(h, 2)
        written_at = h.clock.now() + timedelta(seconds=5)
        ahead = Followups(h.bot.store, ManualClock(written_at))  # the redraw's clock, ahead of the engine's
        await ahead.queue_milestones(1, stale, 0)
        await run_until_idle(h.bot.engine, h.bot.store)  # the close, dated by the engine's clock
        h.clock.advance(timedelta(seconds=10))  # both are due when the notifier comes round
        await h.deliver()

        texts = thread_texts(h, card)
        shares = [i for i, text in enumerate(texts) if "66 % done (2/3 pairs)" in text]
        assert len(shares) == 1 and "Run #1 report" in texts[-1] and shares[0] < len(texts) - 1, texts
