"""The timer holder deletes sent outbox rows past their keeping age (`[notifier] keep_sent_days`).

Each batch is its own short write transaction: on SQLite a write holds the whole database's lock, so a
long DELETE would hold every ack and every lane's settle behind it. The range to delete is read first,
outside the lock; the DELETE then touches at most `batch` rows by primary key.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from bot.domain.clock import Clock
from bot.store import outbox_prune
from bot.store.db import Store

BATCH_ROWS = 200  # rows one DELETE removes: tens of ms of write lock at most (bench/history.py)
PRUNE_TICK_SECONDS = 600.0  # old rows age by the day: every ten minutes is plenty


@dataclass(frozen=True)
class Pruned:
    rows: int
    batches: int
    longest_batch_ms: float  # the longest batch's write transaction, wall time (its wait for the lock too)
    median_batch_ms: float = 0.0


class OutboxPruner:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        keep: timedelta,
        *,
        may_prune: Callable[[], bool],
        batch: int = BATCH_ROWS,
    ) -> None:
        self._store = store
        self._clock = clock
        self._keep = keep
        self._may_prune = may_prune
        self._batch = batch

    async def tick(self) -> Pruned:
        """Only in the process holding the lease, like every timer: two replicas never prune at once."""
        if not self._may_prune():
            return Pruned(0, 0, 0.0)
        return await self.prune()

    async def prune(self) -> Pruned:
        cutoff = self._clock.now() - self._keep
        rows = 0
        walls: list[float] = []
        after = 0
        while True:
            async with self._store.read() as session:
                found = await outbox_prune.next_range(session, cutoff, after, self._batch)
            if found is None:
                return Pruned(rows, len(walls), max(walls, default=0.0), statistics.median(walls or [0.0]))
            first, last = found
            started = time.perf_counter()
            async with self._store.write() as session:
                rows += await outbox_prune.delete_range(session, first, last, cutoff)
            walls.append((time.perf_counter() - started) * 1000)
            after = last
