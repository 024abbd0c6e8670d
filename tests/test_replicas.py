"""Two bot processes on one database, as two replicas behind a load balancer: what Slack sees must be
what one bot would do. One request and one card per slash command however often Slack delivers it and
to whichever process, one launch however the clicks spread, and card edits paced by one budget even
when the timers change hands between two edits.

Real processes with real timers (the harness of `test_restart.py`), so these poll until a deadline.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from bot_process import CONFIG, BotProcess, World, every_lane_ran_once, request_and_approve, world
from harness import CHANNEL, SECRET
from store_reads import all_requests, all_runs, audit_actions
from waiting import until

from bot.playground import APPROVER, REQUESTER, SlackDriver
from bot.playground.driver import FORM
from bot.store.models import PaceBudget

pytestmark = pytest.mark.slow

CARD_SECONDS = 3.0
PACED = CONFIG + f"[notifier]\ncard_update_seconds = {CARD_SECONDS}\n"  # the bot-process config, edits paced


async def holder_and_other(w: World) -> tuple[BotProcess, BotProcess]:
    """Start two bots together; which one holds the timers is the database's choice."""
    bots = list(await asyncio.gather(w.start_bot(), w.start_bot()))
    await until(w.lease_pid, "one bot to take the lease")
    holder_pid = await w.lease_pid()
    holder = next(bot for bot in bots if bot.proc.pid == holder_pid)
    return holder, next(bot for bot in bots if bot is not holder)


def card_edits(w: World, card_ts: str) -> list[float]:
    """When Slack took each edit of the card (answered it)."""
    return [c.at for c in w.standin.calls_to("chat.update") if c.ok and c.args.get("ts") == card_ts]


async def edit_claimed_at(w: World, card_ts: str) -> float:
    """When the latest edit of the card took its turn from the deployment's budget (`bot/store/pacing.py`)."""
    async with w.store.read() as session:
        budget = await session.get(PaceBudget, "chat.update")
    assert budget is not None
    return datetime.fromisoformat(json.loads(budget.state)["last"][card_ts]).timestamp()


async def test_card_edits_keep_one_budget_when_the_timers_change_hands(tmp_path: Path, db_url: str) -> None:
    """The holder of the timers is SIGKILLed while Slack is taking one of its card edits; the other
    bot takes over and edits the same card. Its first edit still waits out the card's interval from
    the dead one's: the budget is the deployment's, in the database, not each process's own."""
    async with world(tmp_path, db_url, PACED) as w:
        holder, other = await holder_and_other(w)
        await request_and_approve(w, other, "run --parallel 4")
        card_ts = w.standin.messages(CHANNEL)[-1]["ts"]
        await until(lambda: card_edits(w, card_ts), "the holder to edit the card")
        hold = w.standin.hold("chat.update", channel=CHANNEL)
        await asyncio.wait_for(hold.arrived.wait(), 60)  # the holder's next edit is under way
        held = len(card_edits(w, card_ts))  # its place among the edits
        claimed = await edit_claimed_at(w, card_ts)  # the turn it took, which it will never restamp
        holder.kill()
        hold.release()  # Slack takes the edit the dead process had sent
        await until(lambda: len(card_edits(w, card_ts)) > held + 1, "the dead one's edit and one more")
        await until(w.finished, "the run to finish")
        edits = card_edits(w, card_ts)
        # The successor's first edit waits out the interval from the turn the dead one took. Measured from
        # that turn, not from when its edit reached Slack: on a loaded machine that came later by a
        # varying fraction of a second, and the bot cannot count from a moment it never saw.
        assert edits[held + 1] - claimed >= CARD_SECONDS, (claimed, edits)
        # One process's edits count from when Slack answered the one before, so they are spaced by the
        # interval as Slack sees them.
        gaps = [later - earlier for earlier, later in itertools.pairwise(edits[: held + 1])]
        gaps += [later - earlier for earlier, later in itertools.pairwise(edits[held + 1 :])]
        assert min(gaps, default=CARD_SECONDS) >= CARD_SECONDS - 0.3, gaps
        await every_lane_ran_once(w)
        assert (await w.lease_pid()) == other.proc.pid


async def test_one_slash_command_delivered_to_both_bots_makes_one_request(
    tmp_path: Path, db_url: str
) -> None:
    """Slack delivers one `/csb run` (one trigger_id) to one bot and again, while it is still at work, to
    both; the Approve click reaches both at once and once more the other. One request row, one card,
    one approval, one launch, every lane once."""
    async with world(tmp_path, db_url) as w:
        holder, other = await holder_and_other(w)
        url_one, url_two = f"{holder.url}/slack/events", f"{other.url}/slack/events"
        async with (
            SlackDriver(url_one, SECRET, w.standin, w.slack_url) as one,
            SlackDriver(url_two, SECRET, w.standin, w.slack_url) as two,
        ):
            sent: list[str] = []
            post = one.post

            async def keep_body(body: str, content_type: str, **options: Any) -> Any:
                sent.append(body)
                return await post(body, content_type, **options)

            setattr(one, "post", keep_body)  # noqa: B010 (keep the signed form to deliver it again)
            assert (await one.slash_command(REQUESTER, "run --parallel 4")).status == 200
            again = await asyncio.gather(post(sent[0], FORM), two.post(sent[0], FORM))
            assert [answer.status for answer in again] == [200, 200]
            await until(lambda: w.standin.messages(CHANNEL), "the approval card")
            card = w.standin.messages(CHANNEL)[-1]
            await until(lambda: "Approve" in str(w.standin.message(CHANNEL, card["ts"])), "Approve")
            clicks = await asyncio.gather(
                post_click(one, card["ts"]), post_click(two, card["ts"]), post_click(two, card["ts"])
            )
            assert clicks == [200, 200, 200]
        await until(w.finished, "the run to finish")
        assert len(await all_requests(w.store)) == 1
        assert len(await all_runs(w.store)) == 1
        cards = [c for c in w.standin.calls_to("chat.postMessage") if c.ok and not c.args.get("thread_ts")]
        assert len(cards) == 1  # one card; everything else went to its thread
        assert (await audit_actions(w.store)).count("launched") == 1
        await every_lane_ran_once(w)
        assert len(await w.lane_states()) == 14


async def post_click(driver: SlackDriver, card_ts: str) -> int:
    return (await driver.click_button(APPROVER, CHANNEL, card_ts, "Approve")).status
