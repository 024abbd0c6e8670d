"""Watch running lanes: find the ones whose process ended and judge them by their files; stop the ones
past their time limit or in a cancelled run (SIGINT, then SIGKILL after the grace period).

The engine settles what was judged in its one write transaction per tick (`settle`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.results import lane_outcome
from bot.csb.task_copy import copy_path, remove_copy
from bot.domain.classify import lost_with_host
from bot.domain.clock import Clock
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.redact import Redactor
from bot.domain.states import RunState
from bot.engine.attempt_end import RETRY_STOPS, STOP_CANCEL, STOP_TIMEOUT
from bot.engine.job_index import JobIndex, attempt_job_dir
from bot.engine.lane_ref import lane_ref
from bot.engine.settle import Ending, apply, decide
from bot.engine.stall_watch import StallWatch
from bot.executors.base import Executor
from bot.settings import EngineConfig
from bot.store import lanes
from bot.store.db import Store
from bot.store.records import Lane

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ended:
    """A lane whose process ended (or that the executor cannot see), and then its judged outcome."""

    lane: Lane
    run_state: RunState
    exit_code: int | None  # None: nothing the executor can see; judged by its files alone
    elsewhere: str | None = None  # where such a lane runs, if the executor knows (another host)
    outcome: TrialOutcome | None = None


class Watcher:
    def __init__(
        self,
        store: Store,
        executor: Executor,
        repo: Path,
        clock: Clock,
        config: EngineConfig,
        redact: Redactor,
    ) -> None:
        self._store = store
        self._executor = executor
        self._repo = repo
        self._clock = clock
        self._config = config
        self._jobs = JobIndex()
        self._stalls = StallWatch(store, repo, config)
        self._redact = redact  # a lane's reason may quote its log, which may print a secret

    async def running(self, session: AsyncSession) -> list[tuple[Lane, RunState]]:
        """The running lanes with their run's state, read in the caller's session (the tick reads what
        it needs to decide in one)."""
        return await lanes.running_lanes_with_run_state(session)

    async def observe(self, running: list[tuple[Lane, RunState]]) -> list[Ended]:
        """Of `running` (as `running` read them), the lanes that ended (one look at the executor for
        all); live ones are stopped when they must be."""
        now = self._clock.now()
        if not running:
            return []
        seen = await self._executor.observe([lane_ref(lane) for lane, _ in running])
        ended: list[Ended] = []
        watched = []
        for lane, run_state in running:
            look = seen[lane.id]
            if look.running:
                await self._police(lane, run_state, now)
                if (
                    run_state is not RunState.CANCELLING
                    and lane.stop_sent_at is None
                    and not lane.stop_wanted
                ):
                    watched.append((lane, self._executor.log_path(lane_ref(lane))))
                continue
            if not look.known and run_state is RunState.CANCELLING and lane.stop_sent_at is None:
                await self._note_stop(lane.id, STOP_CANCEL, now)  # not ours to signal: wait, then write off
            ended.append(Ended(lane, run_state, look.exit_code, look.elsewhere))
        await self._stalls.look(watched, now)
        return ended

    async def judge(self, ended: list[Ended]) -> list[Ended]:
        """Read the result files of ended lanes, in a worker thread (it walks folders)."""
        if not ended:
            return []
        return await asyncio.to_thread(self._judge_all, ended, self._clock.now())

    async def settle(self, session: AsyncSession, judged: list[Ended], now: datetime) -> list[Ending]:
        """Write what the judged lanes came to, in the caller's transaction; returns the endings."""
        endings = [
            decide(
                item.lane,
                item.run_state,
                item.outcome,
                exit_code=item.exit_code,
                now=now,
                config=self._config,
            )
            for item in judged
            if item.outcome is not None
            and (item.outcome.status is not LaneStatus.RUNNING or self._give_up(item, now))
        ]
        if endings:
            await apply(session, endings, now, self._config)
        return endings

    def forget(self, endings: list[Ending]) -> None:
        """After the settling transaction committed: the executor lets go of those processes."""
        for ending in endings:
            self._executor.forget(ending.lane.id)

    async def _police(self, lane: Lane, run_state: RunState, now: datetime) -> None:
        """Stop a live lane that must end: SIGINT once, SIGKILL when the grace period is over."""
        assert lane.started_at is not None
        if lane.stop_sent_at is None:
            kind = self._stop_kind(lane, run_state, now)
            if kind is None:
                return
            await self._executor.interrupt(lane_ref(lane))
            await self._note_stop(lane.id, kind, now)
            log.info("lane %s: SIGINT (%s)", lane.id, kind)
        elif lane.killed_at is None and now - lane.stop_sent_at >= self._grace:
            await self._executor.kill(lane_ref(lane))
            async with self._store.write() as session:
                await lanes.note_killed(session, lane.id, now)
            log.warning("lane %s: SIGKILL after a %s grace period", lane.id, self._grace)

    async def _note_stop(self, lane_id: int, kind: str, now: datetime) -> None:
        async with self._store.write() as session:
            await lanes.note_stop(session, lane_id, kind, now)

    def _stop_kind(self, lane: Lane, run_state: RunState, now: datetime) -> str | None:
        assert lane.started_at is not None
        if run_state is RunState.CANCELLING:
            return STOP_CANCEL
        if now - lane.started_at > timedelta(seconds=lane.timeout_sec):
            return STOP_TIMEOUT
        if lane.stop_wanted in RETRY_STOPS:
            return lane.stop_wanted
        return None

    @property
    def _grace(self) -> timedelta:
        return timedelta(seconds=self._config.cancel_grace_sec)

    def _judge_all(self, ended: list[Ended], now: datetime) -> list[Ended]:
        self._jobs.new_batch()
        return [
            Ended(item.lane, item.run_state, item.exit_code, item.elsewhere, self._judge_one(item, now))
            for item in ended
        ]

    def _judge_one(self, item: Ended, now: datetime) -> TrialOutcome:
        """One lane's files, whatever they hold, must not stop the tick for every other lane and run:
        a failure to judge them ends this lane alone, as errored, and is logged with its traceback.
        The reason may quote Harbor's log, so it is redacted of the bot's secrets before it is kept."""
        try:
            outcome = self._judge(item, now)
        except Exception as exc:
            log.exception("lane %s: its result files could not be judged", item.lane.id)
            reason = f"its result files could not be read: {type(exc).__name__}: {exc}"[:300]
            return TrialOutcome(status=LaneStatus.ERRORED, reason=self._redact(reason), infra=True)
        said = {"reason": outcome.reason, "log_line": outcome.log_line}
        return outcome.model_copy(update={name: self._redact(text) for name, text in said.items() if text})

    def _judge(self, item: Ended, now: datetime) -> TrialOutcome:
        """Judged by the job folder this attempt named (`--job-name`); a lane started by an older
        version, without one, by searching its jobs dir. Once the process has ended its task copy goes."""
        outcome = self._outcome(item.lane, item.exit_code, now)
        if item.elsewhere is not None and item.exit_code is None:
            return lost_with_host(outcome, item.elsewhere)
        return outcome

    def _outcome(self, lane: Lane, exit_code: int | None, now: datetime) -> TrialOutcome:
        assert lane.started_at is not None
        job_dir = attempt_job_dir(self._repo, lane)
        own_job = job_dir.is_dir() or exit_code is not None
        # Only a lane without its own job folder needs the jobs dir listed (and indexed) to be found.
        search = job_dir if own_job else self._jobs.search_root(self._repo / lane.jobs_dir, lane.task_id)
        outcome = lane_outcome(
            search,
            lane.task_id,
            exit_code=exit_code,
            started_at=lane.started_at,
            now=now,
            timeout=timedelta(seconds=lane.timeout_sec),
            log_path=self._executor.log_path(lane_ref(lane)),
            job_dir=job_dir if own_job else None,
            config=lane.config,
        )
        if exit_code is not None and lane.marker:
            remove_copy(copy_path(lane.role, lane.config, lane.task_id, lane.marker))
        return outcome

    def _give_up(self, item: Ended, now: datetime) -> bool:
        """A lane of a cancelled run whose process we cannot see is written off after the grace period."""
        stop = item.lane.stop_sent_at
        return item.run_state is RunState.CANCELLING and stop is not None and now - stop >= self._grace
