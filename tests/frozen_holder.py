"""A bot process's lease keeper frozen inside a transaction: run as a child process by
tests/test_idle_transaction.py, never imported by the bot.

`python frozen_holder.py <database url> <lease ttl s> <report file>` takes the timer lease with the
bot's own `LeaseKeeper`, opens a write transaction that reads the lease row FOR SHARE (as the promotion
fence and every fenced state change do), and stops itself there with SIGSTOP: the freeze lands inside
the transaction, holding the row lock, every time. Once continued (SIGCONT), it does what a holder
would do next in that transaction, a renewal, then asks the keeper again in a new transaction, and
writes what happened to the report as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bot.domain.clock import SystemClock
from bot.engine.lease import LeaseKeeper
from bot.store import lease
from bot.store.availability import outage
from bot.store.db import Store


async def _backend_pid(session: Any) -> int:
    return int((await session.execute(text("SELECT pg_backend_pid()"))).scalar_one())


async def main(url: str, ttl: float, report: Path) -> None:
    clock = SystemClock()
    store = Store(url)
    keeper = LeaseKeeper(store, clock, ttl, slots=1)
    found: dict[str, Any] = {"pid": os.getpid(), "holder": keeper.claimant.holder}
    try:
        found["took"] = (await keeper.hold()).held
        try:
            async with store.write() as session:
                found["frozen_backend"] = await _backend_pid(session)
                found["held_before"] = await lease.holds(session, keeper.claimant.holder, clock.now())
                os.kill(os.getpid(), signal.SIGSTOP)  # frozen here, the lease row locked FOR SHARE
                renewed = await lease.take(  # what the holder would do next: renew it
                    session,
                    keeper.claimant,
                    now=clock.now(),
                    ttl=keeper.ttl,
                    slots=1,
                    expected_holder=keeper.claimant.holder,
                )
                found["renewed_in_frozen_transaction"] = renewed
        except Exception as exc:  # the bot's own code paths catch the same errors, and ask `outage`
            kind = outage(exc)
            found["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            found["outage"] = None if kind is None else kind.value
        # The keeper's next heartbeat, as the engine's tick would ask it (the freeze outlasted the lease's
        # ttl, so it asks the database): a new transaction, on whatever connection the pool hands out.
        found["held_after"] = (await keeper.hold()).held
        async with store.read() as session:
            found["next_backend"] = await _backend_pid(session)
            current = await lease.get_lease(session)
            found["lease_holder_after"] = None if current is None else current.holder
    finally:
        await store.close()
        report.write_text(json.dumps(found))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), Path(sys.argv[3])))
