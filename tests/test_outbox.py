"""The outbox on a real database, SQLite and PostgreSQL: one pending row per message, also when two
processes write it at once, and a redraw asked for while a send is under way is never lost."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from interleave import overlapping_writes
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store import outbox
from bot.store.db import Store
from bot.store.models import OutboxKind, OutboxState, Run, RunRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def open_store(db_url: str) -> Store:
    store = Store(db_url)
    await store.create_tables()
    return store


async def test_a_redraw_asked_for_during_a_send_keeps_the_row_for_one_more_render(db_url: str) -> None:
    store = await open_store(db_url)
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


async def test_a_post_asked_for_twice_is_sent_once(db_url: str) -> None:
    store = await open_store(db_url)
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
    db_url: str,
) -> None:
    store = await open_store(db_url)
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


async def test_two_processes_asking_for_one_message_at_once_leave_one_pending_row(db_url: str) -> None:
    """Each writer reads "no pending row" before the other commits (PostgreSQL, two bot processes):
    they meet on the one-pending-row index; a redraw bumps the generation, a post is added once."""
    store = await open_store(db_url)

    def ask(kind: OutboxKind, target: str) -> Callable[[AsyncSession], Awaitable[None]]:
        return lambda session: outbox.enqueue(session, kind=kind, target=target, now=NOW)

    await overlapping_writes(store, ask(OutboxKind.STATUS, "status:1"), ask(OutboxKind.STATUS, "status:1"))
    await overlapping_writes(
        store, ask(OutboxKind.SUMMARY, "summary:1"), ask(OutboxKind.SUMMARY, "summary:1")
    )
    async with store.read() as session:
        due = await outbox.due(session, NOW)
    assert [(item.target, item.generation) for item in due] == [("status:1", 1), ("summary:1", 0)]
    await store.close()
