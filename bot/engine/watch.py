"""Watch running lanes: classify each one whose process ended, stop the ones past their time limit."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

from bot.csb.results import lane_outcome
from bot.domain.clock import Clock
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.engine.dispatch import status_target
from bot.engine.executor import LocalExecutor, pid_alive
from bot.store import audit, outbox, requests, runs
from bot.store.db import Store
from bot.store.models import Lane, OutboxKind, RunState

log = logging.getLogger(__name__)

# Exit code recorded for a lane whose process vanished while the bot was down (no one reaped it).
EXIT_UNKNOWN = -1


def summary_target(run_id: int) -> str:
    return f"summary:{run_id}"


class Watcher:
    def __init__(self, store: Store, executor: LocalExecutor, repo: Path, clock: Clock) -> None:
        self._store = store
        self._executor = executor
        self._repo = repo
        self._clock = clock

    async def watch(self) -> int:
        """Finish every running lane that is done; returns how many finished."""
        async with self._store.read() as session:
            lanes = await runs.running_lanes(session)
        finished = 0
        for lane in lanes:
            outcome, exit_code = await self._judge(lane)
            if outcome.status is LaneStatus.RUNNING:
                continue
            if outcome.status is LaneStatus.TIMEOUT:
                self._executor.stop(lane.id or 0, lane.pid)
            finished += await self._finish(lane, outcome, exit_code)
        await self._finish_runs()
        return finished

    async def _judge(self, lane: Lane) -> tuple[TrialOutcome, int | None]:
        assert lane.id is not None and lane.started_at is not None
        now = self._clock.now()
        timeout = timedelta(seconds=lane.timeout_sec)
        if self._executor.is_tracked(lane.id):
            exit_code = self._executor.exit_code(lane.id)
            if exit_code is None:
                # Still running: only the clock can end it. Its result is read once Harbor has exited.
                if now - lane.started_at > timeout:
                    return TrialOutcome(status=LaneStatus.TIMEOUT, reason=f"no result after {timeout}"), None
                return TrialOutcome(status=LaneStatus.RUNNING), None
        else:
            # Not ours (the bot restarted): a dead pid means the process ended unobserved.
            alive = lane.pid is not None and pid_alive(lane.pid)
            exit_code = None if alive else EXIT_UNKNOWN
        outcome = await asyncio.to_thread(
            lane_outcome,
            self._repo / lane.jobs_dir,
            lane.task_id,
            exit_code=exit_code,
            started_at=lane.started_at,
            now=now,
            timeout=timeout,
            log_path=self._repo / lane.log_path,
        )
        return outcome, exit_code

    async def _finish(self, lane: Lane, outcome: TrialOutcome, exit_code: int | None) -> int:
        assert lane.id is not None
        now = self._clock.now()
        async with self._store.write() as session:
            done = await runs.finish_lane(session, lane.id, outcome, exit_code=exit_code, now=now)
            if done:
                await outbox.enqueue(
                    session,
                    kind=OutboxKind.STATUS,
                    target=status_target(lane.run_id),
                    now=now,
                    run_id=lane.run_id,
                )
        if outcome.status is not LaneStatus.TIMEOUT:
            self._executor.forget(lane.id)
        return int(done)

    async def _finish_runs(self) -> None:
        """A running run with no queued or running lane is finished: post its summary once."""
        now = self._clock.now()
        async with self._store.write() as session:
            for run in await runs.active_runs(session):
                if run.state is not RunState.RUNNING or await runs.has_unfinished_lanes(session, run.id or 0):
                    continue
                assert run.id is not None
                if not await runs.mark_run_finished(session, run.id, now):
                    continue
                request = await requests.get_request(session, run.request_id)
                assert request is not None
                await audit.record(
                    session,
                    request_id=run.request_id,
                    run_id=run.id,
                    action="finished",
                    actor="csb-bot",
                    at=now,
                    spec_hash=request.spec_hash,
                )
                await outbox.enqueue(
                    session, kind=OutboxKind.STATUS, target=status_target(run.id), now=now, run_id=run.id
                )
                await outbox.enqueue(
                    session, kind=OutboxKind.SUMMARY, target=summary_target(run.id), now=now, run_id=run.id
                )
