"""Races driven on purpose: a writer is held between what it read and what it writes while another
change lands, as a second click, a second bot process or a concurrent PostgreSQL session would do.

SQLite takes its database-wide write lock at `BEGIN IMMEDIATE`, so two writers never overlap by
chance and a missing `WHERE state = expected` goes unnoticed. Each guard only shows its worth when a
writer acts on a read that is no longer true; `before_write_after_read` opens exactly that window.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession
from waiting import until

from bot.store.db import Store


@dataclass
class Window:
    """Whether the other change ran: a test asserts it, so a changed code path cannot pass vacuously."""

    reads: int = 0
    opened: bool = False


@contextmanager
def before_write_after_read(store: Store, meanwhile: Callable[[], Awaitable[object]]) -> Iterator[Window]:
    """The first write transaction on `store` that follows a read first waits for `meanwhile` (once,
    with the store as it was, so the other change commits normally); the held writer then writes on
    what it read before. Writes with no read before them (a click's replay record) pass untouched."""
    read, write = store.read, store.write
    window = Window()

    @asynccontextmanager
    async def counted_read() -> AsyncIterator[AsyncSession]:
        window.reads += 1
        async with read() as session:
            yield session

    @asynccontextmanager
    async def held_write() -> AsyncIterator[AsyncSession]:
        if window.reads and not window.opened:
            window.opened = True
            _unhook(store)
            await meanwhile()
        async with write() as session:
            yield session

    setattr(store, "read", counted_read)  # noqa: B010 (instance attributes shadow the methods)
    setattr(store, "write", held_write)  # noqa: B010
    try:
        yield window
    finally:
        _unhook(store)


def _unhook(store: Store) -> None:
    vars(store).pop("read", None)
    vars(store).pop("write", None)


async def overlapping_writes(
    store: Store,
    first: Callable[[AsyncSession], Awaitable[object]],
    second: Callable[[AsyncSession], Awaitable[object]],
) -> tuple[object, object]:
    """Two write transactions that overlap, as in two bot processes: `first` writes and stays open
    until `second` has begun and is either done or waiting on a lock `first` holds; then `first`
    commits. On PostgreSQL `second` thus reads before `first` commits; SQLite serialises the two at
    BEGIN IMMEDIATE, which is its guarantee."""
    first_wrote = asyncio.Event()
    release = asyncio.Event()

    async def run_first() -> object:
        async with store.write() as session:
            result = await first(session)
            first_wrote.set()
            await release.wait()
        return result

    async def run_second() -> object:
        await first_wrote.wait()
        async with store.write() as session:
            return await second(session)

    one = asyncio.create_task(run_first())
    two = asyncio.create_task(run_second())
    await until(lambda: first_wrote.is_set() or one.done(), "the first writer's write")

    async def second_blocked_or_done() -> bool:
        return two.done() or await _waiting_on_a_lock(store)

    if store.engine.dialect.name == "postgresql":
        await until(second_blocked_or_done, "the second writer to wait or finish")
    release.set()
    return await one, await two


async def _waiting_on_a_lock(store: Store) -> bool:
    async with store.engine.connect() as conn:
        waiting = await conn.exec_driver_sql("SELECT count(*) FROM pg_locks WHERE NOT granted")
        return bool(waiting.scalar_one())
