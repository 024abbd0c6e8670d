"""Pump queued lanes into free slots, then start them.

One write transaction claims everything that fits: runs in queue order (`official` first, then by
approval), each within its own `parallel` and all within the global slot pool, both lanes of a pair
or neither, each lane on the next free account. The claim is fenced by the timer lease, and the lane
is `running` with its marker before its process exists, so a crash in between loses nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.harbor_run import LaunchConfig
from bot.csb.preflight import account_health, has_account_health
from bot.csb.task_copy import copy_path, lane_variant, remove_copy
from bot.csb.usage_cache import UsageCache, cache_path, read_usage_cache
from bot.domain.clock import Clock
from bot.domain.errors import InfraError
from bot.domain.events import AccountHeld, AccountsFree, AccountsHeld, ExecutorAway, ExecutorBack
from bot.domain.mrkdwn import clip
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.redact import Redactor
from bot.domain.states import STARTABLE_RUN_STATES, RunState
from bot.engine.accounts import AccountPicker, AccountPool
from bot.engine.lane_launch import LaneLauncher
from bot.engine.settle import Ending, apply, decide
from bot.executors.base import Executor, LaneLaunch
from bot.services.account_hold import why_held
from bot.settings import EngineConfig
from bot.store import accounts, audit, lanes, lease, outbox, runs
from bot.store.db import Store
from bot.store.lanes import LaneClaim
from bot.store.lease import Claimant
from bot.store.records import Account, Lane, Run

log = logging.getLogger(__name__)
WHY_SHOWN = 500  # the executor's reason, in a thread note

READY_HOMES_EVERY_SEC = 300.0
READY_HOMES_TIMEOUT_SEC = 60.0


@dataclass(frozen=True)
class Claim:
    run: Run
    lane: Lane
    attempt: int  # this start's number, 1 for the first
    home: str
    marker: str


@dataclass
class ClaimBatch:
    claims: list[Claim] = field(default_factory=list)
    unpinned: int | None = None  # a queued run that reached free slots and needs its spec pinned first


def _remove_copies(claims: list[Claim]) -> None:
    """The task copies of attempts that never started: no process will end to have them removed, and a
    retry makes a copy of its own (its marker is new)."""
    for claim in claims:
        lane = claim.lane
        remove_copy(copy_path(lane.role, lane.config, lane.task_id, claim.marker))


class Dispatcher:
    def __init__(
        self,
        store: Store,
        executor: Executor,
        launch: LaunchConfig,
        clock: Clock,
        config: EngineConfig,
        pool: AccountPool,
        claimant: Claimant,
        redact: Redactor,
    ) -> None:
        self._redact = redact  # an executor's or Harbor's error may quote a secret (a URL's password)
        self._store = store
        self._executor = executor
        self._launch = launch
        self._clock = clock
        self._config = config
        self._pool = pool
        self._claimant = claimant
        self._unrecorded: dict[int, int] = {}  # lane id → pid, written in the next transaction
        self._launcher = LaneLauncher(launch)
        self._ready: frozenset[str] | None = None  # CSB's account_health `ready_homes`, when it has one
        self._ready_checked = float("-inf")
        self._paused: str | None = None  # why the executor cannot start lanes now (None: it can)
        self._told: set[int] = set()  # runs told, during this outage, that their lanes wait
        self._usage: UsageCache | None = None  # CSB's usage cache as last read
        self._usage_seen: tuple[float, int] | None = None  # its (mtime, size) then
        self._held: set[int] = set()  # runs told that no account may take their lanes

    async def prepare(self) -> None:
        """Make sure every account home has its row (once, when this process takes the lease)."""
        async with self._store.write() as session:
            await accounts.ensure_accounts(session, self._pool.homes)

    async def launch(self, claims: list[Claim]) -> int:
        """Start claimed lanes; returns how many started. Their pids are written with the next tick."""
        if not claims:
            return 0
        # Retries move an earlier attempt's files and MCP lanes may copy a task folder: in a thread.
        simple = all(claim.attempt == 1 and not self._copies_task(claim.lane) for claim in claims)
        prepared = self._prepare_all(claims) if simple else await asyncio.to_thread(self._prepare_all, claims)
        ready = [
            (claim, launch)
            for claim, launch in zip(claims, prepared, strict=True)
            if isinstance(launch, LaneLaunch)
        ]
        failures = [
            (claim, str(launch))
            for claim, launch in zip(claims, prepared, strict=True)
            if not isinstance(launch, LaneLaunch)
        ]
        started = 0
        pids = await self._executor.start([launch for _, launch in ready])
        for (claim, _), pid in zip(ready, pids, strict=True):
            if isinstance(pid, InfraError):
                log.warning("lane %s could not start: %s", claim.lane.id, pid)
                failures.append((claim, str(pid)))
                continue
            if pid is not None:
                self._unrecorded[claim.lane.id] = pid
            started += 1
        if failures:
            await asyncio.to_thread(_remove_copies, [claim for claim, _ in failures])
            async with self._store.write() as session:
                endings = [self._fail_to_start(claim, reason) for claim, reason in failures]
                await apply(session, endings, self._clock.now(), self._config)
        return started

    async def refresh_ready_homes(self) -> None:
        """Ask CSB's `account_health.py` which homes are ready, at most every `READY_HOMES_EVERY_SEC`
        (the harness asks once per batch); a checkout without it, or the bot's own HOME, skips this."""
        repo = self._launch.repo
        if self._pool.fallback or not has_account_health(repo):
            self._ready = None
            return
        if time.monotonic() - self._ready_checked < READY_HOMES_EVERY_SEC:
            return
        self._ready_checked = time.monotonic()
        real_home = self._launch.base_env.get("HOME", str(Path.home()))
        env = self._launch.base_env
        try:
            health = await account_health(
                repo,
                env,
                timeout_s=READY_HOMES_TIMEOUT_SEC,
                redact=Redactor.from_env(env),
                homes=self._pool.homes,
                real_home=real_home,
            )
        except InfraError as exc:
            log.warning("account readiness unknown, keeping the last verdict: %s", exc)
            return
        if health is None or health.ready_homes is None:
            log.warning("account readiness unknown, keeping the last verdict: the report has no ready_homes")
            return
        self._ready = health.ready_homes

    async def refresh_usage(self) -> None:
        """Read CSB's usage cache again when it changed (or its age may have made it stale), in a
        worker thread; what it holds never raises here (`read_usage_cache`)."""
        home = self._launch.base_env.get("HOME", str(Path.home()))
        path = cache_path(self._config.usage_cache, home)
        try:
            stat = os.stat(path)
            seen: tuple[float, int] | None = (stat.st_mtime, stat.st_size)
        except OSError:
            seen = None
        now = self._clock.now()
        stale_after = timedelta(seconds=self._config.usage_stale_sec)
        cached = self._usage
        if cached is not None and seen == self._usage_seen:
            ages = cached.stale or cached.fetched_at is None or now - cached.fetched_at <= stale_after
            if ages:  # unchanged, and no older than it was judged
                return
        self._usage = await asyncio.to_thread(read_usage_cache, path, now, stale_after)
        self._usage_seen = seen

    async def check_executor(self) -> None:
        """Starting lanes pauses while the executor cannot run them (say, its cluster's head does not
        answer): no claim, so nothing is started into the void. Each run with lanes waiting is told so
        once per outage in its thread, and told again when lanes start again. Running lanes go on."""
        why = await self._executor.unavailable()
        if why is None and self._paused is None:
            return
        now = self._clock.now()
        async with self._store.write() as session:
            if why is None:
                log.info("the executor answers again: lanes start again")
                for run_id in sorted(self._told):
                    event = ExecutorBack()
                    await outbox.tell_run(session, run_id, what="executor_back", event=event, now=now)
                self._paused, self._told = None, set()
                return
            if self._paused is None:
                log.warning("no lane starts while the executor cannot be reached: %s", why)
            self._paused = why
            for run_id in await self._waiting_runs(session, now):
                if run_id in self._told:
                    continue
                self._told.add(run_id)
                away = ExecutorAway(why=clip(self._redact(why), WHY_SHOWN))
                await outbox.tell_run(session, run_id, what="executor_away", event=away, now=now)

    async def _waiting_runs(self, session: AsyncSession, now: datetime) -> list[int]:
        """Runs that would start lanes now but for the executor."""
        waiting = []
        for run in await runs.active_runs(session, states=STARTABLE_RUN_STATES):
            if await lanes.ready_units(session, run.id, now, 2):
                waiting.append(run.id)
        return waiting

    async def record_pids(self, session: AsyncSession) -> None:
        """Pids are for people and tools; a restart finds lanes by their marker, so this may lag a tick."""
        pids, self._unrecorded = self._unrecorded, {}
        await lanes.record_pids(session, pids)

    async def claim(self, session: AsyncSession, now: datetime, pinned: Collection[int]) -> ClaimBatch:
        """Claim everything that fits, in the caller's write transaction (fenced by the lease).

        A queued run starts only when its id is in `pinned` (its spec was just resolved again and
        matched); the first queued run that reaches free slots without that ends the claim, named in
        `unpinned`, so the caller pins it off the write lock and claims again.
        """
        batch = ClaimBatch()
        if self._paused is not None or not await lease.holds(session, self._claimant.holder, now):
            return batch
        running = await lanes.running_counts(session)
        free = self._pool.slots - running.total
        if free <= 0:
            return batch
        ready = await accounts.ready_accounts(session, self._pool.homes, now)
        # Only accounts whose token is still live, checked at every claim: a lane never starts on an
        # expired account (CSB's agent could not refresh a dead one); nor on one drained or too busy.
        live = [account for account in ready if self._why_held(account, now) is None]
        await self._tell_held(session, now, held=not live)
        picker = AccountPicker(live, running.by_account, self._pool.per_account)
        busy = running.by_run
        claims = batch.claims
        for run in await runs.active_runs(session, states=STARTABLE_RUN_STATES):
            if run.state is RunState.QUEUED and run.id not in pinned:
                batch.unpinned = run.id
                break  # strict priority: nothing overtakes it while its spec is checked
            taken, blocked = await self._claim_run(session, run, free, busy, picker, now)
            claims += taken
            free -= len(taken)
            if blocked or free <= 0:
                break  # strict priority: a run that waits for slots is not overtaken
        moved = await lanes.claim_lanes(
            session,
            [LaneClaim(c.lane.id, c.home, c.marker) for c in claims],
            now=now,
            host=self._claimant.host,
        )
        if moved != len(claims):  # another engine got there first: roll back, try next tick
            raise RuntimeError(f"claimed {moved} of {len(claims)} lanes; another engine is running")
        await accounts.set_turns(session, picker.changed)
        return batch

    def _why_held(self, account: Account, now: datetime) -> AccountHeld | None:
        return why_held(
            account,
            now,
            fallback=self._pool.fallback,
            ready=self._ready,
            usage=self._usage,
            limit=self._config.max_utilization,
        )

    async def _tell_held(self, session: AsyncSession, now: datetime, *, held: bool) -> None:
        """When no account may take a lane, each run whose lanes wait is told why, once; and told again
        when an account may (as for an executor outage)."""
        if not held:
            for run_id in sorted(self._held):
                await outbox.tell_run(session, run_id, what="accounts_free", event=AccountsFree(), now=now)
            self._held = set()
            return
        waiting = [run_id for run_id in await self._waiting_runs(session, now) if run_id not in self._held]
        if not waiting:
            return
        everyone = [a for a in await accounts.all_accounts(session) if a.home in self._pool.homes]
        reasons = tuple(why for why in (self._why_held(a, now) for a in everyone) if why is not None)
        for run_id in waiting:
            self._held.add(run_id)
            event = AccountsHeld(accounts=reasons)
            await outbox.tell_run(session, run_id, what="accounts_held", event=event, now=now)

    async def _claim_run(
        self,
        session: AsyncSession,
        run: Run,
        free: int,
        busy: dict[int, int],
        picker: AccountPicker,
        now: datetime,
    ) -> tuple[list[Claim], bool]:
        """Claim this run's next pairs; True as the second value when the global pool or accounts ran out."""
        running = busy.get(run.id, 0)
        room = run.parallel - running
        if room <= 0:
            return [], False
        claims: list[Claim] = []
        blocked = False
        for unit in await lanes.ready_units(session, run.id, now, max(min(free, room), 2)):
            # A run never waits forever: a pair wider than its `parallel` still runs, alone.
            if running and running + len(unit) > run.parallel:
                break
            homes = picker.pick(len(unit), [lane.account for lane in unit]) if len(unit) <= free else None
            if homes is None:
                blocked = True
                break
            for lane, home in zip(unit, homes, strict=True):
                claims.append(Claim(run, lane, lane.attempt + 1, home, f"{lane.id}.{uuid.uuid4().hex[:16]}"))
            running += len(unit)
            free -= len(unit)
            busy[run.id] = running
        if claims:
            await self._announce_start(session, run, now)
        return claims, blocked

    async def _announce_start(self, session: AsyncSession, run: Run, now: datetime) -> None:
        """The run's first lanes: mark it running. Later starts follow lanes that ended in the same
        tick, whose settling already queued the status redraw."""
        if run.state is not RunState.QUEUED or not await runs.mark_run_started(session, run.id, now):
            return
        await audit.record_run(session, run, "launched", now)
        await outbox.redraw_run(session, run.id, now)

    def _copies_task(self, lane: Lane) -> bool:
        """Whether this lane's launch copies its task folder (file work best kept off the event loop)."""
        swapped = lane_variant(lane.role, lane.config).swapped
        environment = self._launch.repo / lane.task_path / "environment"
        return swapped is not None and (environment / swapped).is_file()

    def _prepare_all(self, claims: list[Claim]) -> list[LaneLaunch | Exception]:
        """File work before the spawns, in a worker thread: earlier attempts moved aside, task copies."""
        prepared: list[LaneLaunch | Exception] = []
        try:
            batch = self._launcher.batch()
        except InfraError as exc:
            return [exc for _ in claims]
        for claim in claims:
            try:
                prepared.append(
                    self._launcher.lane_launch(
                        claim.run, claim.lane, claim.attempt, claim.home, claim.marker, batch
                    )
                )
            except (InfraError, OSError) as exc:
                prepared.append(exc)
        return prepared

    def _fail_to_start(self, claim: Claim, reason: str) -> Ending:
        """Harbor could not even start: an infrastructure failure, retried like any other."""
        outcome = TrialOutcome(status=LaneStatus.ERRORED, reason=self._redact(reason), infra=True)
        state = RunState.RUNNING if claim.run.state is RunState.QUEUED else claim.run.state
        return decide(claim.lane, state, outcome, exit_code=None, now=self._clock.now(), config=self._config)
