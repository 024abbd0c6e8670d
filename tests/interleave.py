"""Races driven on purpose: a writer is held between what it read and what it writes while another
change lands, as a second click, a second bot process or a concurrent PostgreSQL session would do.

SQLite takes its database-wide write lock at `BEGIN IMMEDIATE`, so two writers never overlap by
chance and a missing `WHERE state = expected` goes unnoticed. Each guard only shows its worth when a
writer acts on a read that is no longer true; `before_next_write` opens exactly that window.
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
