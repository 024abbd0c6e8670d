"""Orphans: a Harbor process carrying the bot's lane marker (`CSB_BOT_LANE`) that belongs to no running lane
(its lane was retried or settled while a process lived on, or a bot crashed mid-spawn and its marker was
given up). The engine looks on its own host every `LOOK_EVERY` and keeps what it found in the database,
for the admins' App Home; `csb-bot check` looks the same way (`find_orphans`). Nothing is killed: an
operator decides.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from bot.domain import outbox_keys
from bot.executors.processes import MarkedProcess, marked_processes
from bot.store import lanes, orphans, outbox
from bot.store.db import Store
from bot.store.records import OutboxKind

LOOK_EVERY = timedelta(minutes=1)


async def find_orphans(store: Store, repo: Path) -> list[MarkedProcess]:
    """The marked processes of this host, started in the checkout, whose marker no running lane holds."""
    found = await asyncio.to_thread(marked_processes, repo)
    if not found:
        return []
    async with store.read() as session:
        known = {lane.marker for lane in await lanes.running_lanes(session) if lane.marker}
    return [process for process in found if process.marker not in known]


class OrphanWatch:
    def __init__(self, store: Store, repo: Path, host: str) -> None:
        self._store = store
        self._repo = repo
        self._host = host
        self._next: datetime | None = None

    async def look(self, now: datetime) -> None:
        """At most every `LOOK_EVERY`: this host's orphans replace the ones kept, and App Home tabs are
        redrawn when they changed."""
        if self._next is not None and now < self._next:
            return
        self._next = now + LOOK_EVERY
        found = await find_orphans(self._store, self._repo)
        async with self._store.write() as session:
            rows = [(process.marker, process.pid, process.job) for process in found]
            if await orphans.replace_for_host(session, self._host, rows, now):
                await outbox.enqueue(session, kind=OutboxKind.HOME, target=outbox_keys.EVERY_VIEWER, now=now)
