"""Races driven on purpose: a writer is held between what it read and what it writes while another
change lands, as a second click, a second bot process or a concurrent PostgreSQL session would do.

SQLite takes its database-wide write lock at `BEGIN IMMEDIATE`, so two writers never overlap by
chance and a missing `WHERE state = expected` goes unnoticed. Each guard only shows its worth when a
writer acts on a read that is no longer true; `before_write_after_read` opens exactly that window.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

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
