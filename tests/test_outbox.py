"""The outbox on a real SQLite file: one pending row per message, and a redraw asked for while a send
is under way is never lost (that send read older state)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.store import outbox
from bot.store.db import Store
from bot.store.models import OutboxKind, OutboxState, Run, RunRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def open_store(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'outbox.db'}")
    await store.create_tables()
    return store


async def test_a_redraw_asked_for_during_a_send_keeps_the_row_for_one_more_render(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    async with store.write() as session:
        await outbox.enqueue(session, kind=OutboxKind.STATUS, target="status:1", now=NOW)
    async with store.read() as session:
        (taken,) = await outbox.due(session, NOW)  # the notifier reads the row, then renders the card
    async with store.write() as session:  # the run closes while that render is on its way to Slack
        await outbox.enqueue(session, kind=OutboxKind.STATUS, target="status:1", now=NOW)
    later = NOW + timedelta(seconds=2)
    async with store.write() as session:
        assert not await outbox.mark_sent(session, taken, later)
    async with store.read() as session:
        (again,) = await outbox.due(session, later)
    assert again.id == taken.id and again.state is OutboxState.PENDING and again.attempts == 0
    async with store.write() as session:
        assert await outbox.mark_sent(session, again, later)
    async with store.read() as session:
        assert await outbox.due(session, later) == []
    await store.close()


async def test_a_post_asked_for_twice_is_sent_once(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    async with store.write() as session:
        await outbox.enqueue(session, kind=OutboxKind.SUMMARY, target="summary:1", now=NOW)
    async with store.read() as session:
        (taken,) = await outbox.due(session, NOW)
    async with store.write() as session:
        await outbox.enqueue(session, kind=OutboxKind.SUMMARY, target="summary:1", now=NOW)
        assert await outbox.mark_sent(session, taken, NOW)
    async with store.read() as session:
        assert await outbox.due(session, NOW) == []
    await store.close()


async def test_a_thread_reply_waits_for_what_happened_before_it_unless_that_was_set_aside(
    tmp_path: Path,
) -> None:
    store = await open_store(tmp_path)
    later = NOW + timedelta(seconds=5)
    async with store.write() as session:
        session.add(
            RunRequest(id=1, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=NOW)
        )
        await session.flush()
        session.add(Run(id=1, request_id=1, run_dir="r", model="m", parallel=1, created_at=NOW))
        await session.flush()
        await outbox.enqueue(session, kind=OutboxKind.NOTICE, target="notice:1:paused", now=later, run_id=1)
        await outbox.enqueue(session, kind=OutboxKind.SUMMARY, target="summary:1", now=later, run_id=1)
        # Queued last, but the run started before it paused: dated when it happened, it goes first.
        await outbox.enqueue(
            session, kind=OutboxKind.NOTICE, target="milestone:1:started", now=later, request_id=1
        )
    async with store.read() as session:
        paused, report, started = await outbox.due(session, later)
        assert sorted([paused, report, started], key=outbox.thread_order) == [started, paused, report]
        assert await outbox.earlier_in_thread(session, started) is None
        for later_reply in (paused, report):
            first = await outbox.earlier_in_thread(session, later_reply)
            assert first is not None and first.id == started.id
    async with store.write() as session:
        assert started.id is not None and paused.id is not None
        await outbox.set_aside(session, started.id, "msg_too_long")
        await outbox.set_aside(session, paused.id, "invalid_blocks")
    async with store.read() as session:
        assert await outbox.earlier_in_thread(session, report) is None
        assert await outbox.count_set_aside(session) == 2
    await store.close()
