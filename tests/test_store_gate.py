"""The gate's store guards on a real database (SQLite and PostgreSQL): an approval holds exactly the
revision it was clicked for, a double click counts once, and database errors that mean "busy or away"
are told apart from bugs."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from interleave import overlapping_writes
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.spec import Category, RunParams, RunSpec
from bot.domain.states import RequestState
from bot.store import approvals, audit, requests
from bot.store.availability import DATABASE_ERRORS, Outage, outage, unavailable
from bot.store.db import Store
from bot.store.records import NewRequest, PendingWait

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SPEC = RunSpec(
    params=RunParams(suite="s"),
    task_file="benchmarks/suites/s.json",
    task_file_sha256="0" * 64,
    tasks=(),
    lanes=(),
    parallel=1,
)


async def open_store(db_url: str) -> Store:
    store = Store(db_url)
    await store.create_tables()
    async with store.write() as session:
        await requests.create_request(
            session,
            NewRequest(
                spec=SPEC,
                requester="U0ALICE",
                channel_id="C0PLAY",
                response_url=None,
                created_at=NOW,
                category="staging",
                checks_json="{}",
                expires_at=None,
            ),
        )
    return store


async def test_an_approval_holds_only_the_revision_it_was_clicked_for(db_url: str) -> None:
    store = await open_store(db_url)
    async with store.write() as session:
        assert await requests.hold_revision(session, 1, 1)
    async with store.write() as session:  # an Edit commits before the approval's transaction
        assert await requests.revise(
            session,
            1,
            revision=1,
            spec_json=SPEC.model_dump_json(),
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
    store = await open_store(f"sqlite:///{tmp_path / 'gate.db'}")
    holder = sqlite3.connect(tmp_path / "gate.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(Exception) as locked:
            async with store.engine.connect() as conn:
                await conn.exec_driver_sql("PRAGMA busy_timeout=50")  # the bot waits longer; a test need not
                await conn.exec_driver_sql("delete from home_viewers")
        assert unavailable(locked.value) and isinstance(locked.value, DATABASE_ERRORS)
    finally:
        holder.rollback()
        holder.close()
    with pytest.raises(Exception) as broken:
        async with store.read() as session:
            await session.execute(text("select nope from nowhere"))
    assert not unavailable(broken.value)
    await store.close()


def test_every_error_unavailable_accepts_is_a_database_error() -> None:
    """`except DATABASE_ERRORS` then `unavailable(exc)` loses none of the errors it is asked about."""
    away = [
        ConnectionRefusedError(111, "refused"),
        TimeoutError(),
        DisconnectionError("gone"),
        PoolTimeout("pool"),
        InterfaceError("select 1", {}, Exception("connection closed")),
        OperationalError("select 1", {}, Exception("database is locked")),
    ]
    assert all(unavailable(exc) and isinstance(exc, DATABASE_ERRORS) for exc in away)
    assert not isinstance(ValueError("a bug"), DATABASE_ERRORS)


class _PgError(Exception):
    """What asyncpg raises: its SQLSTATE in `sqlstate`."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


def test_busy_and_away_are_told_apart() -> None:
    """A lock or a full pool is busy (a moment); a database that cannot be reached is away (a minute)."""
    busy = [
        OperationalError("delete", {}, Exception("database is locked")),
        PoolTimeout("QueuePool limit of size 5 overflow 10 reached, connection timed out"),
        DBAPIError("update", {}, _PgError("55P03", "canceling statement due to lock timeout")),
        DBAPIError("select 1", {}, _PgError("53300", "sorry, too many clients already")),
    ]
    away = [
        ConnectionRefusedError(111, "Connect call failed"),
        TimeoutError(),
        InterfaceError("select 1", {}, Exception("connection is closed")),
        DBAPIError("select 1", {}, _PgError("57P01", "terminating connection due to administrator command")),
        DBAPIError("select 1", {}, _PgError("57P03", "the database system is starting up")),
        DBAPIError("select 1", {}, _PgError("55000", 'database "t1" is not currently accepting connections')),
        OperationalError("select 1", {}, Exception("unable to open database file")),
    ]
    assert [outage(exc) for exc in busy] == [Outage.BUSY] * len(busy)
    assert [outage(exc) for exc in away] == [Outage.AWAY] * len(away)
    assert outage(DBAPIError("select", {}, _PgError("42P01", 'relation "nope" does not exist'))) is None


async def test_a_double_click_reaching_two_processes_counts_once(db_url: str) -> None:
    """Both deliveries of one click insert the approval before either commits: the unique key lets
    the first count and the second report "already approved", never an IntegrityError."""
    store = await open_store(db_url)

    def approve(session: AsyncSession) -> Awaitable[bool]:
        return approvals.add_approval(session, 1, 1, "U0BOB", NOW)

    assert await overlapping_writes(store, approve, approve) == (True, False)
    async with store.read() as session:
        assert await approvals.approvers(session, 1, 1) == ["U0BOB"]
    await store.close()


async def test_the_reminder_timer_reads_only_requests_past_their_categorys_cutoff(db_url: str) -> None:
    store = await open_store(db_url)  # request 1: staging, made at NOW
    hour = timedelta(hours=1)
    async with store.write() as session:
        for made, category in [(NOW, "official"), (NOW - hour, "official"), (NOW - 2 * hour, "official")]:
            await requests.create_request(
                session,
                NewRequest(SPEC, "U0ALICE", "C0PLAY", None, made, category, "{}", expires_at=None),
            )
        assert await requests.mark_reminded(session, 4, NOW)  # made long ago, reminded just now
        await requests.decide(session, 3, to=RequestState.REJECTED, actor="U0BOB", now=NOW, revision=1)
    official = {Category.OFFICIAL: NOW - hour / 2}
    async with store.read() as session:
        assert await requests.waiting(session, official) == []  # 2 is too new, 3 decided, 4 just reminded
        later = {Category.OFFICIAL: NOW + hour}
        assert [wait.id for wait in await requests.waiting(session, later)] == [2, 4]
        assert await requests.waiting(session, {Category.STAGING: NOW, **later}) == [
            PendingWait(1, "staging", NOW, None),
            PendingWait(2, "official", NOW, None),
            PendingWait(4, "official", NOW - 2 * hour, NOW),
        ]
        assert await requests.waiting(session, {}) == []
    await store.close()
