"""After a restart (or a takeover of the lease), account for every lane the database says is running.

The executor finds them (`Executor.adopt`; the local one by the marker in each process's environment):
- still running: watched again;
- gone but its trial result.json is there (or it was being stopped): known to the executor as ended,
  so the watcher classifies it like any other; it is never started again;
- gone and left no result (or was never started: the bot died between the claim and the start):
  queued again without counting as an infrastructure failure, once `engine.spawn_grace_sec` has passed
  since its claim (until then it may be a process forked but not yet exec'ed: looked for again at the
  next tick);
- not the executor's to see (another host): left to be judged by its result file and time limit.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bot.csb.task_copy import copy_path, remove_copy
from bot.domain.clock import Clock
from bot.engine.job_index import attempt_result
from bot.engine.lane_ref import lane_ref
from bot.executors.base import Executor
from bot.store import lanes, outbox
from bot.store.db import Store
from bot.store.records import Lane

log = logging.getLogger(__name__)

LOST_REASON = "its process was lost while the bot was down; queued again"
# A lane is `running` (with its marker) before its process is forked, and a forked process shows its
# parent's environment, without the marker, until it has exec'ed Harbor. A holder killed mid-spawn
# leaves such a process: alive, unmarked, about to run the lane. Queued again at once, the lane would run
# twice; so a lane claimed within the spawn grace (`engine.spawn_grace_sec`) and not found is looked for
# again at the next tick instead.


@dataclass(frozen=True)
class Reconciled:
    attached: int = 0  # live lanes watched again
    ended: int = 0  # gone, results to read
    requeued: int = 0  # gone without a result: queued again
    elsewhere: int = 0  # not the executor's to see (another host)
    pending: int = 0  # not found but claimed within the spawn grace: looked for again at the next tick


class Reconciler:
    def __init__(
        self, store: Store, executor: Executor, repo: Path, clock: Clock, spawn_grace: timedelta
    ) -> None:
        self._store = store
        self._executor = executor
        self._repo = repo
        self._clock = clock
        self._spawn_grace = spawn_grace

    async def reconcile(self) -> Reconciled:
        async with self._store.read() as session:
            running = await lanes.running_lanes(session)
        known = await self._executor.observe([lane_ref(lane) for lane in running])
        running = [lane for lane in running if not known[lane.id].known]
        if not running:
            return Reconciled()
        adopted = await self._executor.adopt([lane_ref(lane) for lane in running])
        ended = set(adopted.ended)
        gone = [lane for lane in running if lane.id in ended]
        now = self._clock.now()
        missing = await asyncio.to_thread(self._lost, gone)
        pending = [lane for lane in missing if _may_be_starting(lane, now, self._spawn_grace)]
        lost = [lane for lane in missing if not _may_be_starting(lane, now, self._spawn_grace)]
        for lane in missing:
            self._executor.forget(lane.id)  # lost: queued again below; pending: unseen until found
        pids = {lane_id: pid for lane_id, pid in adopted.running.items() if pid is not None}
        await self._record(pids, lost)
        await asyncio.to_thread(_remove_copies, lost)
        report = Reconciled(
            attached=len(adopted.running),
            ended=len(gone) - len(missing),
            requeued=len(lost),
            elsewhere=len(adopted.elsewhere),
            pending=len(pending),
        )
        log.info("reconciled running lanes: %s", report)
        return report

    def _lost(self, gone: list[Lane]) -> list[Lane]:
        """Gone lanes that left no trial result and were not being stopped (worker thread: it reads files)."""
        return [lane for lane in gone if lane.stop_kind is None and not attempt_result(self._repo, lane)]

    async def _record(self, pids: dict[int, int], lost: list[Lane]) -> None:
        now = self._clock.now()
        async with self._store.write() as session:
            await lanes.record_pids(session, pids)
            for lane in lost:
                if await lanes.requeue_lane(
                    session, lane.id, not_before=None, reason=LOST_REASON, infra=False
                ):
                    await outbox.redraw_run(session, lane.run_id, now)


def _may_be_starting(lane: Lane, now: datetime, grace: timedelta) -> bool:
    """Claimed so recently that its process may exist without its marker yet (within `grace`)."""
    return lane.started_at is not None and now - lane.started_at < grace


def _remove_copies(lost: list[Lane]) -> None:
    """A lost attempt's task copy is not needed again: its retry gets a copy of its own."""
    for lane in lost:
        if lane.marker:
            remove_copy(copy_path(lane.role, lane.config, lane.task_id, lane.marker))
