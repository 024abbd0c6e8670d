"""Only the lease holder touches `runs/official`, and a successor waits until the one before has stopped.

A promotion's steps run in the process that holds the timer lease. That process can lose the lease
while a step runs (its heartbeat stalled past the ttl and another replica took it). Then two rules keep
the two processes off the tree at once:

- the executor starts a step, and ends a promotion, only in a transaction that finds it still holds the
  lease (`store.lease.holds`, read FOR SHARE), and while a step runs it beats the promotion's heartbeat
  in such a transaction; a beat that finds the lease gone (or cannot ask) stops the step: its script is
  killed, and it journals the step `released` without settling anything;
- the successor settles a promotion whose step is under way (or whose failure is being settled) only once
  that step's runner released it, is dead on this host, or has not beaten for `STALE_TTLS` lease ttls:
  by then a live runner has seen its lease gone at one of its beats and stopped.
A process frozen for longer than that (SIGSTOP, a suspended VM) could still finish a rename when it wakes;
its next journal write is refused, and the successor's settling of the tree is what the card shows.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.clock import Clock
from bot.domain.promotion_flow import Phase, StepRunner
from bot.engine.lease import RENEW_FRACTION, LeaseKeeper
from bot.executors.processes import process_alive
from bot.store import lease, promotions
from bot.store.db import Store
from bot.store.records import Promotion

log = logging.getLogger(__name__)

STALE_TTLS = 2  # a runner silent this many lease ttls has stopped: it beats every third of one


class PromotionFence:
    def __init__(self, store: Store, keeper: LeaseKeeper, clock: Clock) -> None:
        self._store = store
        self._keeper = keeper
        self._clock = clock
        claimant = keeper.claimant
        self.runner = StepRunner(holder=claimant.holder, host=claimant.host, pid=claimant.pid)

    async def holds(self, session: AsyncSession) -> bool:
        return await lease.holds(session, self._keeper.claimant.holder, self._clock.now())

    async def beat(self, promotion_id: int, stop: threading.Event) -> None:
        """While a step runs: the heartbeat, as long as this process holds the lease; else `stop`."""
        every = self._keeper.ttl.total_seconds() / RENEW_FRACTION
        while not stop.is_set():
            await asyncio.sleep(every)
            try:
                async with self._store.write() as session:
                    held = await self.holds(session)
                    if held:
                        await promotions.beat(session, promotion_id, self._clock.now())
            except Exception:
                log.exception("promotion %s: the heartbeat could not be written", promotion_id)
                held = False
            if not held:
                log.warning("promotion %s: the timer lease is gone; stopping its step", promotion_id)
                stop.set()

    def abandoned(self, promotion: Promotion, now: datetime) -> bool:
        """Whether this process may settle a promotion it does not run: no step of it can still be under
        way in another process."""
        if promotion.phase not in (Phase.STARTED.value, Phase.FAILED.value):
            return True  # between steps: its runner's next start is refused, the lease being ours
        entry = next((e for e in promotions.entries(promotion) if e.step.value == promotion.step), None)
        runner = entry.runner if entry is not None else None
        if entry is None or entry.released or runner is None or runner.holder == self.runner.holder:
            return True
        if runner.host == self.runner.host and not process_alive(runner.pid):
            return True
        return promotion.updated_at + STALE_TTLS * self._keeper.ttl <= now
