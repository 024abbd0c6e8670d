"""After a restart (or a takeover of the lease), account for every lane the database says is running.

- its process is alive (found by the marker in its environment): attached and watched by pid;
- its process is gone but its trial result.json is there: attached as ended, so the watcher
  classifies it like any other; it is never started again;
- its process is gone and left no result (or was never spawned: the bot died between the claim and
  the spawn): queued again, at once, without counting as an infrastructure failure;
- it runs on another host: left to be judged by its result file and time limit.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from bot.csb.task_copy import copy_path, remove_copy
from bot.domain.clock import Clock
from bot.engine.executor import LocalExecutor
from bot.engine.job_index import attempt_result
from bot.engine.processes import find_marked, markers_supported, process_alive
from bot.store import lanes, outbox
from bot.store.db import Store
from bot.store.models import Lane

log = logging.getLogger(__name__)

LOST_REASON = "its process was lost while the bot was down; queued again"


@dataclass(frozen=True)
class Reconciled:
    attached: int = 0  # live processes watched again
    ended: int = 0  # processes gone, results to read
    requeued: int = 0  # gone without a result: queued again
    elsewhere: int = 0  # on another host


class Reconciler:
    def __init__(self, store: Store, executor: LocalExecutor, repo: Path, host: str, clock: Clock) -> None:
        self._store = store
        self._executor = executor
        self._repo = repo
        self._host = host
        self._clock = clock

    async def reconcile(self) -> Reconciled:
        async with self._store.read() as session:
            running = [
                lane
                for lane in await lanes.running_lanes(session)
                if not self._executor.is_tracked(lane.id or 0)
            ]
        if not running:
            return Reconciled()
        mine = [lane for lane in running if lane.host in (None, self._host)]
        found, results = await asyncio.to_thread(self._look, mine)
        pids: dict[int, int] = {}
        lost: list[Lane] = []
        for lane in mine:
            lane_id = lane.id or 0
            pid = found.get(lane.marker or "")
            if pid is not None:
                self._executor.attach(lane_id, pid)
                pids[lane_id] = pid
            elif lane_id in results or lane.stop_kind is not None:
                self._executor.attach(lane_id, None)  # the watcher reads its result, or ends the stop
            else:
                lost.append(lane)
        await self._record(pids, lost)
        await asyncio.to_thread(_remove_copies, lost)
        report = Reconciled(
            attached=len(pids),
            ended=len(mine) - len(pids) - len(lost),
            requeued=len(lost),
            elsewhere=len(running) - len(mine),
        )
        log.info("reconciled running lanes: %s", report)
        return report

    def _look(self, lanes: list[Lane]) -> tuple[dict[str, int], set[int]]:
        """Live processes by marker, and the lanes without one that left a trial result (worker thread)."""
        found = find_marked({lane.marker for lane in lanes if lane.marker})
        if not markers_supported():  # no /proc: fall back on the recorded pid
            found.update(
                {
                    lane.marker: lane.pid
                    for lane in lanes
                    if lane.marker and lane.pid and process_alive(lane.pid)
                }
            )
        results = {
            lane.id or 0 for lane in lanes if lane.marker not in found and attempt_result(self._repo, lane)
        }
        return found, results

    async def _record(self, pids: dict[int, int], lost: list[Lane]) -> None:
        now = self._clock.now()
        async with self._store.write() as session:
            await lanes.record_pids(session, pids)
            for lane in lost:
                if await lanes.requeue_lane(
                    session, lane.id or 0, not_before=None, reason=LOST_REASON, infra=False
                ):
                    await outbox.redraw_run(session, lane.run_id, now)


def _remove_copies(lost: list[Lane]) -> None:
    """A lost attempt's task copy is not needed again: its retry gets a copy of its own."""
    for lane in lost:
        if lane.marker:
            remove_copy(copy_path(lane.role, lane.config, lane.task_id, lane.marker))
