"""End to end: with the database locked by another process (SQLite's write lock held past the bot's wait)
or away (PostgreSQL refusing the bot's database), a command is still acked at once and answered, never
silently dropped; so is a modal's submit. Locked says "busy, try again in a moment"; away says
"database unavailable, try again in a minute"."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from pathlib import Path

import asyncpg
import pytest
from harness import Harness, running_bot
from postgres_cluster import Cluster
from sqlalchemy.exc import OperationalError
from store_reads import all_requests, request_count
from test_e2e_gate import prefilled_values
from test_e2e_run import request_card
from test_race_guards import open_modal, submit_reject

from bot.playground import ADMIN, APPROVER, OUTSIDER, REQUESTER
from bot.services.requests import RunRequestService
from bot.slack.errors import AWAY, BUSY
from bot.store import db

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
        assert busy == BUSY and "busy, try again in a moment" in busy
        assert "/csb run" in help_text and "/csb status" in help_text  # the answer itself got through
        await h.bot.inflight.wait_idle()
        assert await request_count(h.bot.store) == 0  # told, not done


async def dm_texts(h: Harness, user: str, count: int, within: float = 60.0) -> list[str]:
    """Poll the Slack stand-in for `count` messages in `user`'s DM with the app."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        texts = [str(m.get("text", "")) for m in h.standin.messages(f"D{user[1:]}")]
        if len(texts) >= count:
            return texts
        await asyncio.sleep(0.1)
    raise AssertionError(f"{user}'s DM had {count} messages not within {within} s")


async def test_locked_database_during_a_modal_submit_acks_fast_and_answers_busy_in_the_dm(
    tmp_path: Path,
) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        view_id = await open_modal(h, APPROVER, card, "Reject")
        lock = sqlite3.connect(tmp_path / "bot.db", timeout=0, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        try:
            started = time.monotonic()
            await submit_reject(h, APPROVER, view_id, "not this week")
            assert time.monotonic() - started < 3.0
            (busy,) = await dm_texts(h, APPROVER, 1)  # a modal's submit has no response_url
        finally:
            lock.rollback()
            lock.close()
        assert busy == BUSY
        await h.deliver()
        assert h.ephemeral_texts(APPROVER) == []
        assert [r.state.value for r in await all_requests(h.bot.store)] == ["pending"]  # told, not done


async def test_a_modal_whose_check_finds_the_database_away_stays_open_with_the_away_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        view_id = await open_modal(h, REQUESTER, card, "Edit")

        async def away(*_args: object) -> None:  # as PostgreSQL answers while it restarts
            raise OperationalError("SELECT", {}, Exception("could not connect to server"))

        monkeypatch.setattr(RunRequestService, "resolve", away)
        response = await h.driver.submit_view(REQUESTER, view_id, prefilled_values(h.standin.views[view_id]))
        assert response.json is not None and response.json["response_action"] == "errors"
        (line,) = response.json["errors"].values()
        assert line == AWAY
        assert view_id in h.standin.views  # kept open, the input intact for a second try


async def test_database_away_acks_fast_and_answers_unavailable(
    tmp_path: Path, postgres: Cluster | None
) -> None:
    """PostgreSQL refuses the bot's database (as when its server is down or unreachable): a command and a
    modal's submit are acked within Slack's 3 s and told the database is unavailable, not that it is
    busy; a command that needs no database is still answered, and nothing was done meanwhile."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database()
    async with running_bot(tmp_path, csb_database_url=url) as h:
        card = await request_card(h)
        view_id = await open_modal(h, APPROVER, card, "Reject")
        postgres.admit(url, allowed=False)
        try:
            started = time.monotonic()
            run = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
            helped = await h.driver.slash_command(APPROVER, "help")
            await submit_reject(h, APPROVER, view_id, "not this week")
            assert run.status == helped.status == 200
            assert time.monotonic() - started < 3.0
            (away,) = await replies_of(h, REQUESTER, 1)
            (help_text,) = await replies_of(h, APPROVER, 1)
            (dm,) = await dm_texts(h, APPROVER, 1)
            await h.bot.inflight.wait_idle()
        finally:
            postgres.admit(url, allowed=True)
        assert away == dm == AWAY and "database unavailable, try again in a minute" in away.lower()
        assert "/csb run" in help_text
        assert [r.state.value for r in await all_requests(h.bot.store)] == ["pending"]  # told, not done


async def answered(h: Harness, users: tuple[str, ...], before: dict[str, int], within: float = 60.0) -> None:
    """Deliver (a round may fail on a dead connection; the next goes on) until each of `users` has one
    more reply than `before`."""
    deadline = time.monotonic() + within
    while any(len(h.ephemeral_texts(u)) <= before[u] for u in users):
        assert time.monotonic() < deadline, {u: h.ephemeral_texts(u) for u in users}
        with contextlib.suppress(Exception):  # a round hung on a dead connection is given up
            await asyncio.wait_for(h.deliver(), 10.0)
        await asyncio.sleep(0.1)


async def test_a_database_that_stops_answering_holds_no_connection_for_good(
    tmp_path: Path, postgres: Cluster | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops answering on every connection the bot has open (a network cut, a frozen host)
    while new connections are served. Each statement's deadline frees the pool: every command is still
    acked and answered (its answer, or the unavailable line if its connection was a frozen one), and
    the next ones are answered as usual. Without a deadline the pool stayed full of hung connections
    for good ("QueuePool limit of size 5 overflow 10 reached")."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    monkeypatch.setattr(db, "COMMAND_TIMEOUT_SEC", 1.0)  # the deadline, short for the test
    url = postgres.new_database()
    people = (REQUESTER, APPROVER, ADMIN, OUTSIDER)
    async with running_bot(tmp_path, csb_database_url=url) as h:
        await asyncio.gather(*(h.driver.slash_command(user, "status") for user in people))
        await h.deliver()  # the pool has connections open
        frozen = postgres.freeze(url)
        try:
            assert frozen
            before = {user: len(h.ephemeral_texts(user)) for user in people}
            started = time.monotonic()
            acks = await asyncio.gather(*(h.driver.slash_command(user, "status") for user in people))
            assert {ack.status for ack in acks} == {200} and time.monotonic() - started < 3.0
            await answered(h, people, before)
            assert all(h.ephemeral_texts(u)[-1] in (AWAY, h.ephemeral_texts(u)[0]) for u in people)

            before = {user: len(h.ephemeral_texts(user)) for user in people}
            await asyncio.gather(*(h.driver.slash_command(user, "status") for user in people))
            await answered(h, people, before, within=30.0)
            assert [h.ephemeral_texts(u)[-1] for u in people] == [h.ephemeral_texts(u)[0] for u in people]
        finally:
            postgres.thaw(frozen)


async def test_tables_locked_on_postgresql_ack_fast_and_answer_busy(
    tmp_path: Path, postgres: Cluster | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's counterpart of SQLite's write lock: another session holds the tables a command
    writes past the bot's lock timeout. The command is told "busy" (not "unavailable": the server
    answers), the answer of one that needs no write still gets through, and nothing was done."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    monkeypatch.setattr(db, "COMMAND_TIMEOUT_SEC", 2.0)  # and so a lock timeout of 1.6 s
    url = postgres.new_database()
    async with running_bot(tmp_path, csb_database_url=url) as h:
        holder = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        lock = holder.transaction()
        await lock.start()
        await holder.execute("LOCK TABLE run_requests, outbox IN EXCLUSIVE MODE")  # reads go on
        try:
            started = time.monotonic()
            run = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
            helped = await h.driver.slash_command(APPROVER, "help")
            assert run.status == helped.status == 200
            assert time.monotonic() - started < 3.0
            (busy,) = await replies_of(h, REQUESTER, 1)
            (help_text,) = await replies_of(h, APPROVER, 1)
        finally:
            await lock.rollback()
            await holder.close()
        assert busy == BUSY
        assert "/csb run" in help_text
        await h.bot.inflight.wait_idle()
        assert await request_count(h.bot.store) == 0  # told, not done
