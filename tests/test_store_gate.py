"""The gate's store guards on a real SQLite file: an approval holds exactly the revision it was
clicked for, and database errors that mean "busy or away" are told apart from bugs."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.store import audit, requests
from bot.store.availability import unavailable
from bot.store.db import Store
from bot.store.models import RequestState, RunRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def open_store(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'gate.db'}")
    await store.create_tables()
    async with store.write() as session:
        await requests.create_request(
            session,
            RunRequest(
                spec_json="{}", spec_hash="h1", requester="U0ALICE", channel_id="C0PLAY", created_at=NOW
            ),
        )
    return store


async def test_an_approval_holds_only_the_revision_it_was_clicked_for(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    async with store.write() as session:
        assert await requests.hold_revision(session, 1, 1)
    async with store.write() as session:  # an Edit commits before the approval's transaction
        assert await requests.revise(
            session,
            1,
            revision=1,
            spec_json="{}",
            spec_hash="h2",
            category="staging",
            checks_json="{}",
            change_note="Edited by <@U0BOB> (revision 2): parallel: 4 → 8",
        )
        await audit.record(session, request_id=1, action="edited", actor="U0BOB", at=NOW, spec_hash="h2")
    async with store.write() as session:
        assert not await requests.hold_revision(session, 1, 1)  # the card clicked showed revision 1
        assert await requests.hold_revision(session, 1, 2)
        assert await audit.editors(session, 1) == {"U0BOB"}
        await requests.decide(session, 1, to=RequestState.REJECTED, actor="U0BOB", now=NOW, revision=2)
    async with store.write() as session:
        assert not await requests.hold_revision(session, 1, 2)  # decided: nothing more counts
    await store.close()


async def test_a_locked_database_is_unavailable_and_a_broken_query_is_not(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    holder = sqlite3.connect(tmp_path / "gate.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Exception) as locked:
            async with store.engine.connect() as conn:
                await conn.exec_driver_sql("PRAGMA busy_timeout=50")  # the bot waits longer; a test need not
                await conn.exec_driver_sql("delete from home_viewers")
        assert unavailable(locked.value)
    finally:
        holder.rollback()
        holder.close()
    with pytest.raises(Exception) as broken:
        async with store.read() as session:
            await session.execute(text("select nope from nowhere"))
    assert not unavailable(broken.value)
    await store.close()
