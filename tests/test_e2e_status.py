"""End to end: the living card, the milestone thread, the paired report, DMs, App Home, and delivery
that survives a storm of 429s and 5xx from Slack."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from test_e2e_run import card_text, labels, request_card

from bot.playground import APPROVER, REQUESTER
from bot.store import outbox

pytestmark = pytest.mark.slow


async def approved_run(h: Harness, text: str = "run csb_sdlc_fix") -> dict[str, Any]:
    card = await request_card(h, text)
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
    await h.deliver()
    current = h.standin.message(CHANNEL, card["ts"])
    assert current is not None
    return current


def thread_texts(h: Harness, card: dict[str, Any]) -> list[str]:
    return [card_text(m) or m.get("text", "") for m in h.thread(card)]


async def test_card_goes_queued_running_finished_and_thread_gets_milestones_and_report(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h, "run csb_sdlc_fix --parallel 4")  # two pairs, then one: milestones
        shown = card_text(card)
        assert "Queued* #1 in the queue" in shown
        assert "0/3 pairs done" in shown and labels(card) == ["Cancel"]

        await h.run_lanes()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        shown = card_text(card)
        assert "Finished" in shown and "3/3 pairs done" in shown and "▓" * 20 in shown
        assert "*baseline*: 1 passed, 2 failed, 0 errored, 0 timeout" in shown
        assert "*MCP*: 3 passed, 0 failed, 0 errored, 0 timeout" in shown
        assert f"Approved* by <@{APPROVER}>" in shown and "spec `" in shown
        assert labels(card) == []

        texts = thread_texts(h, card)
        assert "Run #1 started." in texts[0]
        # 1 and 2 of 3 pairs pass the 25 % and 50 % marks; each note names the real share
        shares = [re.search(r"(\d+) % done \((\d)/3 pairs\)", t) for t in texts]
        shares = [(int(m[1]), int(m[2])) for m in shares if m]
        assert shares and all(pct == done * 100 // 3 for pct, done in shares), shares
        report = texts[-1]
        thread = h.thread(card)
        # The baseline's failures are genuine: no Rerun failed; a finished staging run may be promoted.
        assert labels(thread[-1]) == ["Promote to official"]
        assert "baseline 1/3 (33.3 %)" in report and "MCP 3/3 (100.0 %)" in report
        assert "+66.7 pts" in report and "p = 0.500" in report
        assert report.index("MCP-only wins") < report.index("Both lanes agree")
        assert "`pagination-offset-fix-001`  baseline failed 0.00 · MCP passed 1.00" in report
        assert len([t for t in texts if "Run #1 report: csb_sdlc_fix" in t and "MCP-only" in t]) == 1
        assert (
            thread[-1]["text"].count("Run #1") == 1 and "Run #1 finished (csb_sdlc_fix)" in thread[-1]["text"]
        )

        posts = [c.args for c in h.standin.calls_to("chat.postMessage") if c.ok]
        assert any(p.get("reply_broadcast") in (True, "true", "1") for p in posts)
        (dm,) = h.standin.messages("D0ALICE")
        assert (
            dm["text"].startswith("Run #1 finished (csb_sdlc_fix): baseline 1/3")
            and dm["text"].count("#1") == 1
        )
        assert f"<https://slack.com/archives/{CHANNEL}/p{card['ts'].replace('.', '')}|" in dm["text"]
        assert labels(dm) == []  # as the README says: only for failures a rerun as is can fix


async def test_every_message_arrives_once_after_a_storm_of_429_and_5xx(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        h.standin.inject_failure("chat.postMessage", status=429, count=3, retry_after=0)
        h.standin.inject_failure("chat.postMessage", status=503, count=2, after_store=True)
        h.standin.inject_failure("chat.update", status=429, count=3, retry_after=0)
        h.standin.inject_failure("chat.update", status=500, count=2)
        card = await request_card_through_storm(h)
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await settle(h)
        await h.run_lanes()
        await settle(h)
        top_level = h.cards()
        assert len(top_level) == 1
        texts = thread_texts(h, top_level[0])
        assert len(texts) == len(set(texts)), texts  # nothing doubled
        assert sum("MCP-only wins" in t for t in texts) == 1
        assert "Finished" in card_text(top_level[0])


async def test_a_slack_outage_longer_than_the_attempts_delays_but_loses_nothing(
    tmp_path: Path, db_url: str
) -> None:
    few_attempts = "[notifier]\nmax_attempts = 2\ncard_update_seconds = 0\npost_interval_seconds = 0\n"
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=few_attempts) as h:
        h.standin.inject_failure("chat.postMessage", status=503, count=5)
        card = await request_card_through_storm(h)  # five failed posts, then Slack is back
        assert "CSB run request #1" in card_text(card)
        failed = [c for c in h.standin.calls_to("chat.postMessage") if not c.ok]
        assert len(failed) == 5
        async with h.bot.store.read() as session:
            assert await outbox.count_set_aside(session) == 0


async def request_card_through_storm(h: Harness) -> dict[str, Any]:
    await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
    await settle(h)
    return h.last_card()


async def settle(h: Harness, rounds: int = 12) -> None:
    """Deliver, moving the clock past each retry's backoff, until nothing is left to send."""
    for _ in range(rounds):
        await h.deliver()
        h.clock.advance(timedelta(seconds=61))


PACED = """
[notifier]
card_update_seconds = 30
post_interval_seconds = 0
"""


async def test_card_edits_are_paced_and_the_last_state_is_never_dropped(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=PACED) as h:
        card = await approved_run(h, "run csb_sdlc_debug")
        await h.run_lanes()
        updates = [c for c in h.standin.calls_to("chat.update") if c.ok]
        assert len(updates) <= 2  # the approval edit, then at most one more inside 30 s of frozen time
        h.clock.advance(timedelta(seconds=31))
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None and "Finished" in card_text(card) and "3/3 pairs done" in card_text(card)


async def test_status_shows_one_card_or_the_active_runs(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await approved_run(h)
        for text in ("status", "status 1"):  # one at a time: replies keep the order asked
            await h.driver.slash_command(REQUESTER, text)
            await h.deliver()
        listing, copy = h.standin.ephemerals(REQUESTER)[-2:]
        assert re.search(r"#1 queued #1 in the queue: 0/6 lanes done", listing["text"])
        assert "CSB run request #1" in card_text(copy)


# App Home shows what `/csb status` outside the channel would: a listed approver sees what waits for them.
LISTED_APPROVER = f"""
[policy.staging.approvers]
users = ["{APPROVER}"]
"""


async def test_app_home_lists_what_waits_for_me_and_refreshes(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=LISTED_APPROVER) as h:
        await h.driver.app_home_opened(APPROVER)
        await h.deliver()
        home = h.standin.home(APPROVER)
        assert home is not None and "Nothing right now" in card_text(home)
        # 6: CSB's default parallel for one account (the bot's own HOME), the pool without account homes
        assert "Queue*: 0 queued · 0 running · 0/6 slots busy" in card_text(home)
        await request_card(h)
        await h.deliver()
        home = h.standin.home(APPROVER)
        assert home is not None
        assert "Waiting for your approval* (1)" in card_text(home)
        assert labels(home) == ["Approve", "Reject"]
        await h.driver.click_home_button(APPROVER, "Approve")
        await h.deliver()
        await h.deliver()
        home = h.standin.home(APPROVER)
        assert home is not None and "Nothing right now" in card_text(home)
        assert re.search(r"Queue\*: 1 queued · 0 running · 0/\d+ slots busy", card_text(home))

        await h.run_lanes()
        await h.driver.app_home_opened(REQUESTER)
        await h.deliver()
        mine = card_text(h.standin.home(REQUESTER) or {})
        assert "Your runs" in mine and "#1* `csb_sdlc_fix` finished" in mine and "3/3 pairs" in mine
