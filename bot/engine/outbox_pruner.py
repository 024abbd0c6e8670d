"""The timer holder deletes sent outbox rows past their keeping age (`[notifier] keep_sent_days`).

Each batch is its own short write transaction: on SQLite a write holds the whole database's lock, so a
long DELETE would hold every ack and every lane's settle behind it. The range to delete is read first,
outside the lock; the DELETE then touches the rows of that range by primary key. A batch is bounded in
time, not only in rows: its size follows the last batch's pace so that it holds the lock about
`LOCK_BUDGET_MS` (`bot/domain/batch_size.py`), and the pruner then steps aside as long as the batch held
the lock, so writers waiting for it (SQLite's busy handler polls) take it before the next batch does.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from bot.domain.batch_size import BatchRule
from bot.domain.clock import Clock
from bot.store import outbox_prune
from bot.store.db import Store

BATCH_ROWS = 200  # the most rows one DELETE removes
FIRST_BATCH = 50  # before any pace is known: a loaded machine deletes 200 rows in 80 ms
SMALLEST_BATCH = 10
LOCK_BUDGET_MS = 20.0  # a batch's hold on the write lock; the goal: never over 50 ms (bench/history.py)
PRUNE_TICK_SECONDS = 600.0  # old rows age by the day: every ten minutes is plenty


@dataclass(frozen=True)
class Pruned:
    rows: int
    batches: int
    longest_batch_ms: float  # the longest a batch held the write lock, from taking it to its commit
    median_batch_ms: float = 0.0
    smallest_batch: int = 0  # rows: the smallest size the pace asked for


class OutboxPruner:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        keep: timedelta,
        *,
        may_prune: Callable[[], bool],
        batch: int = BATCH_ROWS,
        budget_ms: float = LOCK_BUDGET_MS,
    ) -> None:
        self._store = store
        self._clock = clock
        self._keep = keep
        self._may_prune = may_prune
        self._rule = BatchRule(budget_ms=budget_ms, largest=batch, smallest=min(SMALLEST_BATCH, batch))
        self._size = min(FIRST_BATCH, batch)

    async def tick(self) -> Pruned:
        """Only in the process holding the lease, like every timer: two replicas never prune at once."""
        if not self._may_prune():
            return Pruned(0, 0, 0.0)
        return await self.prune()

    async def prune(self) -> Pruned:
        cutoff = self._clock.now() - self._keep
        rows = 0
        holds: list[float] = []
        smallest = self._size
        after = 0
        while True:
            async with self._store.read() as session:
                found = await outbox_prune.next_range(session, cutoff, after, self._size)
            if found is None:
                median = statistics.median(holds or [0.0])
                return Pruned(rows, len(holds), max(holds, default=0.0), median, smallest if holds else 0)
            first, last = found
            async with self._store.write() as session:
                await session.connection()  # the write lock is taken here (SQLite: BEGIN IMMEDIATE)
                locked = time.perf_counter()
                rows += await outbox_prune.delete_range(session, first, last, cutoff)
            held = time.perf_counter() - locked
            holds.append(held * 1000)
            self._size = self._rule.next_size(self._size, held * 1000)
            smallest = min(smallest, self._size)
            after = last
            await asyncio.sleep(held)  # step aside: writers waiting for the lock go first
