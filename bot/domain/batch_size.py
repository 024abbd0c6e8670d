"""How many rows the next batch of a background delete takes, so that each holds the write lock for about
a budget of time, whatever the machine's pace.

A fixed number of rows is a fixed amount of work, not of time: on a loaded machine the same 200 rows held
SQLite's write lock (the whole database's) from 12 ms to over 80 ms. So each batch is sized from the last
one's pace: the rows that would have taken the budget at that pace. Past the budget it shrinks at once;
under it, it grows by at most a quarter a batch (one fast batch on a quiet moment says little), never past
the largest size nor below the smallest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["GROWTH", "BatchRule"]

GROWTH = 1.25  # the most a batch grows over the last one


@dataclass(frozen=True)
class BatchRule:
    budget_ms: float
    largest: int
    smallest: int = 1

    def next_size(self, size: int, held_ms: float) -> int:
        """The next batch's rows after a batch of `size` rows held the lock `held_ms`."""
        if held_ms > self.budget_ms:
            wanted = math.floor(size * self.budget_ms / held_ms)
        else:
            wanted = math.ceil(size * GROWTH)
            if held_ms > 0:
                wanted = min(wanted, math.floor(size * self.budget_ms / held_ms))
        return max(self.smallest, min(self.largest, wanted))
