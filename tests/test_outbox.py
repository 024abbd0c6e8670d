"""The outbox on a real SQLite file: one pending row per message, and a redraw asked for while a send
is under way is never lost (that send read older state)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.store import outbox
from bot.store.db import Store
from bot.store.models import OutboxKind, OutboxState

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
