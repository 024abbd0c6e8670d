"""End to end: delivery to Slack that one bad message cannot stop, a lost sent mark or a malformed answer
cannot double, and a hanging call cannot stall; and a thread that reads in the order things happened.

Slack's bad days are played by the stand-in: refusals (`invalid_blocks`, `invalid_arguments`), pages
instead of JSON, answers without `ts`, calls that hang. The database's are played by triggers that
refuse a write, as a full disk would. Tests that read the outbox back run on SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from idle import run_until_idle
from sqlalchemy import select, text, update
from test_e2e_run import card_text
from test_e2e_status import approved_run, settle, thread_texts

from bot.domain import events, outbox_keys
from bot.domain.events import RunResumed
from bot.playground import ADMIN, APPROVER, OUTSIDER, REQUESTER
from bot.slack import create_client
from bot.slack.outbound.notifier import Notifier
from bot.store import outbox
from bot.store.db import Store
from bot.store.models import OutboxItem, OutboxKind, RunRequest

pytestmark = pytest.mark.slow

ADMINS = f'[policy]\nadmins = ["{ADMIN}"]\n'
OTHER = "C0OTHER"
BOUND = 20.0  # seconds: generous, for a loaded machine; a healthy run takes a fraction of that


async def outbox_rows(store: Store) -> list[tuple[str, str, str | None]]:
    """(target, state, error) of every outbox row, oldest first."""
    async with store.read() as session:
        rows = (await session.execute(select(OutboxItem).order_by(OutboxItem.id))).scalars()
        return [(row.target, row.state.value, row.error) for row in rows]


async def set_aside(store: Store) -> list[tuple[str, str | None]]:
    return [(target, error) for target, state, error in await outbox_rows(store) if state == "dead"]


async def card_ts(store: Store, request_id: int = 1) -> str | None:
    async with store.read() as session:
        return (await session.get_one(RunRequest, request_id)).card_ts


def keys_posted(h: Harness, channel: str = CHANNEL) -> list[str]:
    """The idempotency key of every message the bot has in `channel`, threads included."""
    seen: dict[str, dict[str, Any]] = {}
    for top in h.standin.messages(channel):
        for message in [top, *h.standin.thread(channel, top["ts"])]:
            seen[message["ts"]] = message
    return [
        str((m.get("metadata") or {}).get("event_payload", {}).get("key"))
        for m in seen.values()
        if m.get("metadata")
    ]


async def wait_for(condition: Any, what: str) -> None:
    """Poll `condition()` until it holds, for at most BOUND seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


# -- one bad message never blocks the others -----------------------------------------------------------


async def test_messages_slack_refuses_are_set_aside_at_once_and_the_rest_still_goes(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=ADMINS) as h:
        card = await approved_run(h)
        # Slack refuses the card's next edit and the next post in its channel (the thread's "started"),
        # as it would a section over 3,000 characters: no retry can fix that.
        h.standin.refuse("chat.update", "invalid_blocks")
        h.standin.refuse("chat.postMessage", "invalid_arguments", channel=CHANNEL)
        await h.bot.engine.tick()
        await h.deliver()  # the edit is refused: nothing sent, so deliver once more for "started"
        await h.deliver()
        refused = await set_aside(h.bot.store)
        assert sorted(error or "" for _, error in refused) == ["invalid_arguments", "invalid_blocks"]
        await h.driver.slash_command(REQUESTER, "cancel 1 wrong model")
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert any("wrong model" in text for text in thread_texts(h, card))  # the thread went on

        await h.driver.slash_command(REQUESTER, "run csb_sdlc_debug")
        await h.driver.slash_command(OUTSIDER, "help")
        await h.deliver()
        assert "CSB run request #2" in card_text(h.last_card())
        assert h.ephemeral_texts(OUTSIDER), "the help reply was not delivered"

        await h.driver.app_home_opened(ADMIN)
        await h.driver.app_home_opened(REQUESTER)
        await h.deliver()
        assert "Messages set aside*: 2" in card_text(h.standin.home(ADMIN) or {})
        assert "set aside" not in card_text(h.standin.home(REQUESTER) or {})


async def test_a_card_that_cannot_be_rendered_never_blocks_later_messages(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=ADMINS) as h:
        await approved_run(h)
        # The reported case: a 3,200-character reason made the card unrenderable and every later
        # delivery failed on it, across restarts.
        await h.driver.slash_command(REQUESTER, "cancel 1 " + "x" * 3200)
        await h.deliver()
        assert h.ephemeral_texts(REQUESTER), "the cancel got no reply"

        await h.driver.slash_command(REQUESTER, "run csb_sdlc_debug")
        await h.bot.inflight.wait_idle()
        async with h.bot.store.write() as session:  # a row whose rendering raises, whatever the text
            await session.execute(update(RunRequest).where(RunRequest.id == 2).values(spec_json='{"broken'))
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.driver.slash_command(OUTSIDER, "help")
        await h.deliver()

        assert "CSB run request #3" in card_text(h.last_card())
        assert h.ephemeral_texts(OUTSIDER), "the help reply was not delivered"
        errors = dict(await set_aside(h.bot.store))
        assert (errors.get("card:2") or "").startswith("cannot render: ValidationError"), errors


# -- a post whose sent mark is lost is looked for, not posted again ------------------------------------

SQLITE_DISK_FULL = [
    """CREATE TRIGGER sent_mark_fails BEFORE UPDATE OF state ON outbox WHEN NEW.state = 'sent'
    BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END""",
    """CREATE TRIGGER card_ts_fails BEFORE UPDATE OF card_ts ON run_requests
    BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END""",
]
SQLITE_DISK_FREED = ["DROP TRIGGER sent_mark_fails", "DROP TRIGGER card_ts_fails"]
POSTGRES_DISK_FULL = [
    """CREATE OR REPLACE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$""",
    """CREATE TRIGGER sent_mark_fails BEFORE UPDATE OF state ON outbox
    FOR EACH ROW WHEN (NEW.state::text = 'sent') EXECUTE FUNCTION disk_full()""",
    """CREATE TRIGGER card_ts_fails BEFORE UPDATE OF card_ts ON run_requests
    FOR EACH ROW EXECUTE FUNCTION disk_full()""",
]
POSTGRES_DISK_FREED = ["DROP TRIGGER sent_mark_fails ON outbox", "DROP TRIGGER card_ts_fails ON run_requests"]


async def disk_full(store: Store, full: bool) -> None:
    """Make the sent mark and the card's ts unwritable (`full`), as a full disk would, or writable again."""
    if store.engine.dialect.name == "sqlite":
        statements = SQLITE_DISK_FULL if full else SQLITE_DISK_FREED
    else:
        statements = POSTGRES_DISK_FULL if full else POSTGRES_DISK_FREED
    async with store.write() as session:
        for statement in statements:
            await session.execute(text(statement))


def restarted_notifier(h: Harness) -> Notifier:
    """The notifier of a bot process started afresh on the same database: nothing kept in memory."""
    config = h.bot.config
    return Notifier(
        h.bot.store,
        create_client(h.bot.settings),
        h.clock,
        config.notifier,
        config.policy,
        h.repo,
        eager=False,
        may_deliver=lambda: True,  # a test process delivers whoever holds the lease
    )


async def test_a_post_whose_sent_mark_cannot_be_written_is_posted_once(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await disk_full(h.bot.store, True)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.bot.inflight.wait_idle()
        for _ in range(3):  # Slack takes the card; the bot cannot record that it did
            await h.bot.notifier.deliver()
        restarted = restarted_notifier(h)
        for _ in range(3):
            await restarted.deliver()
        assert await card_ts(h.bot.store) is None and h.standin.messages(CHANNEL)  # posted, not marked
        await disk_full(h.bot.store, False)
        await restarted.deliver()
        assert keys_posted(h) == ["card:1"]
        card = h.last_card()
        assert await card_ts(h.bot.store) == card["ts"]

        # Thread replies too: approved, then cancelled, while no sent mark can be written.
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.bot.inflight.wait_idle()
        await restarted.deliver()
        await disk_full(h.bot.store, True)
        await h.driver.slash_command(REQUESTER, "cancel 1 wrong model")
        await h.bot.inflight.wait_idle()
        for _ in range(4):
            await restarted.deliver()
        again = restarted_notifier(h)
        for _ in range(4):
            await again.deliver()
        await disk_full(h.bot.store, False)
        for _ in range(4):
            await again.deliver()
        card_key, *replies = keys_posted(h)
        assert card_key == "card:1" and len(replies) == 1, replies
        assert replies[0].startswith("notice:1:cancel"), replies


# -- a malformed answer is a failed call -----------------------------------------------------------------


async def test_an_answer_without_ts_is_retried_and_the_card_never_stores_none(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        h.standin.answer_badly("chat.postMessage", "no_ts", after_store=True)
        h.standin.answer_badly("chat.postMessage", "no_ts", after_store=False)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await settle(h)
        assert keys_posted(h) == ["card:1"]
        card = h.last_card()
        assert await card_ts(h.bot.store) == card["ts"]
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        assert "Approved" in card_text(h.standin.message(CHANNEL, card["ts"]) or {})


async def test_a_page_instead_of_json_is_a_failed_call_and_retried(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        h.standin.answer_badly("chat.postMessage", "html", after_store=False)
        h.standin.answer_badly("chat.postMessage", "text", after_store=True)
        h.standin.answer_badly("chat.update", "text", after_store=False)
        card = await request_card_through(h, "run csb_sdlc_fix")
        assert keys_posted(h) == ["card:1"]
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await settle(h)
        assert "Approved" in card_text(h.standin.message(CHANNEL, card["ts"]) or {})
        assert await set_aside(h.bot.store) == []
        assert await card_ts(h.bot.store) == card["ts"]


async def request_card_through(h: Harness, text: str) -> dict[str, Any]:
    await h.driver.slash_command(REQUESTER, text)
    await settle(h)
    return h.last_card()


# -- a thread reads in the order things happened ---------------------------------------------------------

PACED = "[notifier]\ncard_update_seconds = 30\npost_interval_seconds = 0\n"


async def test_the_report_never_comes_before_started_even_while_card_edits_wait(tmp_path: Path) -> None:
    async with running_bot(tmp_path, config_text=PACED) as h:
        card = await approved_run(h)
        await h.run_lanes()  # the clock stands still: every status edit of the card waits its turn
        h.clock.advance(timedelta(seconds=31))
        await h.deliver()
        texts = thread_texts(h, card)
        assert "Run #1 started." in texts[0], texts
        assert "MCP-only wins" in texts[-1], texts


async def test_a_pause_is_told_after_the_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    behaviours = {task: "crash" for task in ("slugify-punctuation-fix-001", "pagination-offset-fix-001")}
    behaviours["config-merge-nested-fix-001"] = "crash"
    script = tmp_path / "standin-script.json"
    script.write_text(json.dumps(behaviours))
    monkeypatch.setenv("HARBOR_STANDIN_SCRIPT", str(script))
    pause_soon = "[engine]\ninfra_pause_min_attempts = 4\ninfra_pause_rate = 0.5\n"
    async with running_bot(tmp_path, config_text=pause_soon) as h:
        card = await approved_run(h)
        # started, crashed, paused, before anything is delivered
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        texts = thread_texts(h, card)
        started = [i for i, t in enumerate(texts) if "Run #1 started." in t]
        paused = [i for i, t in enumerate(texts) if "paused" in t.lower()]
        assert started and paused and started[0] < paused[0], texts
        pause = texts[paused[0]]  # names what failed, not a guess at accounts and Daytona
        assert (
            "failed on infrastructure: no_trial_result" in pause
            and "Fix the cause, then `/csb resume 1`" in pause
        ), pause
        assert "Check the accounts and Daytona" not in pause


async def test_thread_notices_queued_as_text_or_as_events_both_deliver(tmp_path: Path, db_url: str) -> None:
    """A notice row written by a version before events holds its words: they go as they are. A row
    holding an event is worded by the views when it is sent; one that cannot be read is set aside with
    its reason, never posted as JSON."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.deliver()
        now = h.clock.now()
        async with h.bot.store.write() as session:
            for what, stored in [
                ("older", ":pause_button: Run #1 is paused: written by an older version."),
                ("event", events.dump(RunResumed(run_id=1, user=APPROVER))),
                ("broken", '{"kind":"run_resumed","run_id":"one"}'),
            ]:
                target = outbox_keys.notice(1, what, now)
                await outbox.enqueue(
                    session, kind=OutboxKind.NOTICE, target=target, now=now, run_id=1, text=stored
                )
        await h.deliver()
        texts = thread_texts(h, card)
        assert ":pause_button: Run #1 is paused: written by an older version." in texts, texts
        assert f":arrow_forward: <@{APPROVER}> resumed run #1." in texts, texts
        assert not [t for t in texts if '"kind"' in t], texts
        ((target, error),) = await set_aside(h.bot.store)
        assert outbox_keys.parse(target).parts[1] == "broken" and "outbox event unreadable" in (
            error or ""
        ), error


async def test_a_reply_set_aside_never_holds_up_its_thread(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.bot.engine.tick()
        h.standin.refuse("chat.postMessage", "msg_too_long", channel=CHANNEL)  # "started" is refused
        await h.deliver()
        await h.run_lanes()
        texts = thread_texts(h, card)
        assert not any("started" in t for t in texts) and "MCP-only wins" in texts[-1], texts
        assert [target for target, _ in await set_aside(h.bot.store)] == ["milestone:1:started"]


# -- a slow call holds up only its own conversation -----------------------------------------------------


async def test_a_hanging_call_in_one_channel_does_not_delay_another_channel(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        h.standin.add_channel(OTHER, "other")
        hold = h.standin.hold("chat.postMessage", channel=CHANNEL)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.bot.inflight.wait_idle()
        stuck = asyncio.create_task(h.bot.notifier.deliver())
        try:
            await asyncio.wait_for(hold.arrived.wait(), BOUND)
            # A backlog behind it: more rows than a round takes on, all in the hanging conversation.
            async with h.bot.store.write() as session:
                for n in range(250):
                    target = f"notice:1:backlog:{n}"
                    await outbox.enqueue(
                        session, kind=OutboxKind.NOTICE, target=target, now=h.clock.now(), request_id=1
                    )
            # While that post hangs, people in another channel are answered.
            await h.driver.slash_command(APPROVER, "run csb_sdlc_debug", channel_id=OTHER)
            await h.driver.slash_command(OUTSIDER, "help", channel_id=OTHER)
            await h.bot.inflight.wait_idle()
            await asyncio.wait_for(h.bot.notifier.deliver(), BOUND)
            assert [m for m in h.standin.messages(OTHER) if "CSB run request #2" in card_text(m)]
            assert h.ephemeral_texts(OUTSIDER)
            assert not stuck.done() and h.standin.messages(CHANNEL) == []
        finally:
            hold.release()
        await asyncio.wait_for(stuck, BOUND)
        assert keys_posted(h) == ["card:1"]


async def test_a_call_that_hangs_times_out_and_its_message_is_not_doubled(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, slack_timeout=2.0) as h:
        hold = h.standin.hold("chat.postMessage", channel=CHANNEL)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.bot.inflight.wait_idle()
        try:
            assert await asyncio.wait_for(h.bot.notifier.deliver(), BOUND) == 0  # timed out, held for retry
            (row,) = [r for r in await outbox_rows(h.bot.store) if r[0] == "card:1"]
            assert row[1] == "pending" and "Timeout" in (row[2] or ""), row
        finally:
            hold.release()  # Slack stores the post after all, as it may after a timeout
        await wait_for(lambda: h.standin.messages(CHANNEL) != [], "the held post to land")
        await settle(h)
        assert keys_posted(h) == ["card:1"]
        assert await card_ts(h.bot.store) == h.last_card()["ts"]
