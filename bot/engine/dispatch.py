"""Pump queued lanes into free slots: both lanes of a pair are claimed in one transaction, then started."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.csb.command import lane_command, lane_env
from bot.csb.task_copy import mcp_task_path
from bot.domain.clock import Clock
from bot.domain.errors import InfraError
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.spec import LaneRole
from bot.engine.executor import LaneLaunch, LocalExecutor
from bot.store import audit, outbox, requests, runs
from bot.store.db import Store
from bot.store.models import Lane, OutboxKind, Run

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LaunchConfig:
    """What every lane command shares: where CSB lives, which harbor, and the environment to start from."""

    repo: Path
    harbor: str
    base_env: Mapping[str, str]
    timeout_multiplier: int
    daytona: bool


def status_target(run_id: int) -> str:
    return f"status:{run_id}"


class Dispatcher:
    def __init__(self, store: Store, executor: LocalExecutor, launch: LaunchConfig, clock: Clock) -> None:
        self._store = store
        self._executor = executor
        self._launch = launch
        self._clock = clock

    async def pump(self) -> int:
        """Start as many pairs as the runs' slots allow, oldest run first; returns lanes started."""
        async with self._store.read() as session:
            active = await runs.active_runs(session)
        started = 0
        for run in active:
            started += await self._fill(run)
        return started

    async def _fill(self, run: Run) -> int:
        started = 0
        while True:
            pair = await self._claim_pair(run)
            if not pair:
                return started
            for lane in pair:
                await self._start(run, lane)
                started += 1

    async def _claim_pair(self, run: Run) -> list[Lane]:
        """Claim the next pair if it fits in the run's free slots, all its lanes or none."""
        assert run.id is not None
        now = self._clock.now()
        async with self._store.write() as session:
            pair = await runs.next_queued_pair(session, run.id)
            running = await runs.count_running(session, run.id)
            # A run never waits forever: a pair wider than `parallel` still runs, alone.
            if not pair or (running and running + len(pair) > run.parallel):
                return []
            for lane in pair:
                assert lane.id is not None
                if not await runs.claim_lane(session, lane.id, now):
                    raise RuntimeError(f"lane {lane.id} claimed twice in one transaction")
            if await runs.mark_run_started(session, run.id, now):
                request = await requests.get_request(session, run.request_id)
                assert request is not None
                await audit.record(
                    session,
                    request_id=run.request_id,
                    run_id=run.id,
                    action="launched",
                    actor="csb-bot",
                    at=now,
                    spec_hash=request.spec_hash,
                )
            await outbox.enqueue(
                session, kind=OutboxKind.STATUS, target=status_target(run.id), now=now, run_id=run.id
            )
        return pair

    async def _start(self, run: Run, lane: Lane) -> None:
        assert lane.id is not None
        try:
            launch = await asyncio.to_thread(self._lane_launch, run, lane)
            pid = await self._executor.start(launch)
        except (InfraError, OSError) as exc:
            log.warning("lane %s could not start: %s", lane.id, exc)
            await self._fail_to_start(lane, str(exc))
            return
        async with self._store.write() as session:
            await runs.record_pid(session, lane.id, pid)

    def _lane_launch(self, run: Run, lane: Lane) -> LaneLaunch:
        cfg = self._launch
        task_path = lane.task_path
        if lane.role == LaneRole.MCP:
            task_path = mcp_task_path(cfg.repo, lane.task_path, lane.jobs_dir, lane.task_id)
        argv = lane_command(
            cfg.harbor,
            task_path,
            run.model,
            lane.jobs_dir,
            daytona=cfg.daytona,
            timeout_multiplier=cfg.timeout_multiplier,
        )
        home = cfg.base_env.get("HOME", str(Path.home()))
        env = lane_env(cfg.base_env, home=home, mcp_type=lane.mcp_type)
        return LaneLaunch(
            lane_id=lane.id or 0, argv=argv, cwd=cfg.repo, env=env, log_path=cfg.repo / lane.log_path
        )

    async def _fail_to_start(self, lane: Lane, reason: str) -> None:
        assert lane.id is not None
        now = self._clock.now()
        outcome = TrialOutcome(status=LaneStatus.ERRORED, reason=reason, infra=True)
        async with self._store.write() as session:
            await runs.finish_lane(session, lane.id, outcome, exit_code=None, now=now)
            await outbox.enqueue(
                session,
                kind=OutboxKind.STATUS,
                target=status_target(lane.run_id),
                now=now,
                run_id=lane.run_id,
            )
