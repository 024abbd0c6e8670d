"""Races driven on purpose: a writer is held between what it read and what it writes while another
change lands, as a second click, a second bot process or a concurrent PostgreSQL session would do.

SQLite takes its database-wide write lock at `BEGIN IMMEDIATE`, so two writers never overlap by
chance and a missing `WHERE state = expected` goes unnoticed. Each guard only shows its worth when a
writer acts on a read that is no longer true; `before_next_write` opens exactly that window.
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

    opened: bool = False


@contextmanager
def before_next_write(store: Store, meanwhile: Callable[[], Awaitable[object]]) -> Iterator[Window]:
    """The next write transaction on `store` first waits for `meanwhile` (once, with the store as it
    was, so the other change commits normally); the held writer then writes on its earlier reads."""
    original = store.write
    window = Window()

    @asynccontextmanager
    async def held_write() -> AsyncIterator[AsyncSession]:
        if not window.opened:
            window.opened = True
            vars(store).pop("write", None)
            await meanwhile()
        async with original() as session:
            yield session

    setattr(store, "write", held_write)  # noqa: B010 (an instance attribute shadows the method)
    try:
        yield window
    finally:
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
