"""The engine: one tick holds the lease, watches running lanes, then fills free slots.

A queued run's first lanes start only after its spec was resolved again and still matches the
approval (`pinning`): the claim stops at such a run, the tick pins it outside the write transaction
(it reads the checkout) and claims again at once.

Timers only call `tick`; a lane process exiting also asks for a tick (`kick`), so a freed slot is
refilled at once rather than at the next timer. Only the lease holder acts; on taking the lease it
first reconciles the lanes a previous holder left running, and a reconciliation that fails (its write
refused, say) is tried again at the start of every tick until it succeeds.
"""

from __future__ import annotations

import asyncio
import logging

from bot.domain.clock import Clock
from bot.domain.promotion_flow import PromotionState
from bot.engine.after_batch import AfterBatchRunner
from bot.engine.budget_drain import BudgetDrain
from bot.engine.closing import close_runs
from bot.engine.dispatch import Dispatcher
from bot.engine.lease import LeaseKeeper
from bot.engine.orphans import OrphanWatch
from bot.engine.pinning import LaunchPins
from bot.engine.promotion_runner import PromotionRunner
from bot.engine.reconcile import Reconciler
from bot.engine.watch import Watcher
from bot.executors.base import Executor
from bot.store.db import Store
from bot.store.promotions import states_present

log = logging.getLogger(__name__)

# After a lane exits, wait this long for more exits before ticking: the lanes of one wave end within
# milliseconds of each other, and one tick for all of them is far cheaper than one each, at a cost of
# a few milliseconds of a 0.2 s-or-longer lane.
GATHER_QUIET = 0.004
# The promotion states the runner acts on from the tick: a tick that finds none skips both of its looks.
_PROMOTION_WORK = (PromotionState.EXECUTING, PromotionState.APPROVED)


class Engine:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        dispatcher: Dispatcher,
        watcher: Watcher,
        reconciler: Reconciler,
        pins: LaunchPins,
        lease: LeaseKeeper,
        executor: Executor,
        after_batch: AfterBatchRunner,
        promotions: PromotionRunner,
        *,
        eager: bool,
        budgets: BudgetDrain | None = None,
        orphans: OrphanWatch | None = None,
    ) -> None:
        self._orphans = orphans  # marked processes no running lane owns, looked for on this host
        self._store = store
        self._clock = clock
        self._dispatcher = dispatcher
        self._watcher = watcher
        self._reconciler = reconciler
        self._pins = pins
        self.lease = lease
        self.executor = executor
        self.after_batch = after_batch
        self.promotions = promotions
        self._budgets = budgets  # drains runs past their monthly budget's block line
        self._lock = asyncio.Lock()
        self._eager = eager
        self._kicked: asyncio.Task[None] | None = None
        self._again = False
        self._unreconciled = False  # lanes a previous holder left running are not accounted for yet
        executor.on_exit = self.kick

    async def tick(self) -> None:
        """Watch first so slots freed by ended lanes are refilled in the same tick (and transaction)."""
        async with self._lock:  # a slow tick and the next timer firing must not interleave
            holding = await self.lease.hold()
            if not holding.held:
                return
            if holding.fresh:
                self._unreconciled = True
                await self._dispatcher.prepare()
            reconciled = self._unreconciled  # lanes the reconciliation settles spent money too
            if self._unreconciled:
                # Until it succeeds nothing else runs: the watcher would take a lost lane for one
                # still running elsewhere and, hours later, record it as a timeout.
                # A lane that may still be starting is looked for again next tick (`spawn_grace_sec`).
                self._unreconciled = (await self._reconciler.reconcile()).pending > 0
            async with self._store.read() as session:  # what this tick acts on, in one read
                running = await self._watcher.running(session)
                promoting = await states_present(session, _PROMOTION_WORK)
            if PromotionState.EXECUTING in promoting:  # a cut-off one, once its runner has stopped
                await self.promotions.settle_interrupted()
            judged = await self._watcher.judge(await self._watcher.observe(running))
            await self._dispatcher.refresh_ready_homes()
            await self._dispatcher.refresh_usage()
            await self._dispatcher.check_executor()
            now = self._clock.now()
            async with self._store.write() as session:  # one transaction: settle, close, claim
                await self._dispatcher.record_pids(session)
                endings = await self._watcher.settle(session, judged, now)
                closed = await close_runs(session, now)
                if self._budgets is not None:  # before the claim: a run over budget starts nothing more
                    if endings or reconciled:
                        self._budgets.spend_changed()
                    await self._budgets.drain_over_budget(session, now)
                batch = await self._dispatcher.claim(session, now, ())
            self._watcher.forget(endings)
            self.after_batch.start(closed)
            await self._dispatcher.launch(batch.claims)
            await self._start_queued(batch.unpinned)
            if PromotionState.APPROVED in promoting:
                await self.promotions.start_approved()
            if self._orphans is not None:
                await self._orphans.look(now)

    async def _start_queued(self, unpinned: int | None) -> None:
        """Pin each queued run that reached free slots, then claim again; a run is checked once a tick,
        so one whose checkout cannot be read ends the loop (and waits) instead of spinning."""
        checked: set[int] = set()
        pinned: set[int] = set()
        while unpinned is not None and unpinned not in checked:
            checked.add(unpinned)
            if await self._pins.verify(unpinned):
                pinned.add(unpinned)
            async with self._store.write() as session:
                batch = await self._dispatcher.claim(session, self._clock.now(), pinned)
            await self._dispatcher.launch(batch.claims)
            unpinned = batch.unpinned

    def kick(self) -> None:
        """Tick soon, outside the timer (a lane ended); off (`eager=False`) in tests, which tick alone."""
        if not self._eager:
            return
        if self._kicked is not None and not self._kicked.done():
            self._again = True
            return
        self._kicked = asyncio.create_task(self._kick_ticks())

    async def _kick_ticks(self) -> None:
        self._again = True
        while self._again:
            self._again = False
            await asyncio.sleep(GATHER_QUIET)  # let the rest of a wave of exits join this tick
            try:
                await self.tick()
            except Exception:
                log.exception("engine tick after a lane exit failed")
                return

    async def shutdown(self) -> None:
        """Let go of the lease (lanes keep running; the next holder reconciles them)."""
        if self._kicked is not None:
            self._kicked.cancel()
        async with self._lock:
            await self.lease.release()
        await self.executor.close()
