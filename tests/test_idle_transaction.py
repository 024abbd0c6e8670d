"""A bot process frozen inside a transaction on PostgreSQL (SIGSTOP, a suspended VM, a debugger) does not
keep the lease row locked for good: the server ends its session after `idle_in_transaction_session_timeout`
(`?idle_in_transaction_timeout=N` in the URL), another bot takes the timers, and the frozen one, running
again, finds its connection ended, acts as holder nowhere, and goes on with a fresh connection."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from bot_process import CONFIG, World, world
from harness import ROOT
from sqlalchemy import text
from waiting import until

from bot.store import lease
from bot.store.db import IDLE_IN_TRANSACTION_SEC, IDLE_OPTION, Store

pytestmark = pytest.mark.slow

FROZEN = ROOT / "tests" / "frozen_holder.py"
TTL = 3  # the lease's: short, so that the bot finds it expired soon after the freeze
IDLE = 2  # seconds a session may stay idle inside a transaction, in this test


def _stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP): its state in /proc is `T`."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


async def _holder(w: World) -> str | None:
    async with w.store.read() as session:
        current = await lease.get_lease(session)
    return None if current is None else current.holder


async def test_a_holder_frozen_in_a_transaction_loses_the_lease_and_recovers_without_acting(
    tmp_path: Path, postgres: object
) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = f"{postgres.new_database()}?{IDLE_OPTION}={IDLE}"  # type: ignore[attr-defined]
    config = CONFIG.replace("lease_ttl_sec = 30", f"lease_ttl_sec = {TTL}")
    async with world(tmp_path, url, config) as w:
        report = tmp_path / "frozen.json"
        with open(tmp_path / "frozen.log", "wb") as log:
            frozen = subprocess.Popen(
                [sys.executable, str(FROZEN), url, str(TTL), str(report)],
                env=w.env,
                cwd=tmp_path,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            await until(lambda: _stopped(frozen.pid), "the holder to freeze inside its transaction")
            assert await w.lease_pid() == frozen.pid  # it holds the lease, and the row is locked for it

            bot = await w.start_bot()
            # The lease expires after its ttl; the bot's UPDATE of the row then waits for the frozen
            # holder's lock, until the server ends that session: then the bot holds the timers.
            await until(lambda: _lease_pid_is(w, bot.proc.pid), "the bot to take the lease")
        finally:
            frozen.send_signal(signal.SIGCONT)
        await until(lambda: frozen.poll() is not None, "the frozen holder to end")
        found = json.loads(report.read_text())
        assert frozen.returncode == 0, (tmp_path / "frozen.log").read_text()

        assert found["took"] and found["held_before"]  # it was the holder, frozen in a fenced transaction
        assert "renewed_in_frozen_transaction" not in found, found  # its renewal never went through
        assert found["outage"] == "away", found  # the ended session is an outage, not a bug
        assert found["held_after"] is False, found  # it does not act as holder
        assert found["next_backend"] != found["frozen_backend"]  # a fresh connection, not the dead one
        bot_holder = found["lease_holder_after"]
        assert bot_holder is not None and bot_holder.split(":")[-2] == str(bot.proc.pid)
        first_renewal = await _renewed_at(w)
        await until(  # the bot goes on renewing the lease row: nothing of the frozen one's is left on it
            lambda: _renewed_after(w, first_renewal), "the bot to renew the lease"
        )
        assert await _holder(w) == bot_holder


async def _lease_pid_is(w: World, pid: int) -> bool:
    return await w.lease_pid() == pid


async def _renewed_at(w: World) -> object:
    async with w.store.read() as session:
        return (await session.execute(text("SELECT renewed_at FROM leases"))).scalar_one()


async def _renewed_after(w: World, before: object) -> bool:
    return await _renewed_at(w) != before


async def test_the_timeout_reaches_every_postgresql_connection(postgres: object) -> None:
    """The default on the server's side of each connection, and the URL's own value, in seconds; the
    bot's query key never reaches the driver (which would refuse it)."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    base = postgres.new_database()  # type: ignore[attr-defined]
    default = int(IDLE_IN_TRANSACTION_SEC * 1000)
    cases = ((base, default), (f"{base}?{IDLE_OPTION}=2.5", 2500), (f"{base}?{IDLE_OPTION}=0", 0))
    for url, expected in cases:
        store = Store(url)
        try:
            async with store.read() as session:
                found = await session.execute(
                    text("SELECT setting FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'")
                )
        finally:
            await store.close()
        assert int(found.scalar_one()) == expected, url  # milliseconds
