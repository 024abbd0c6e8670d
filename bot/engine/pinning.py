"""Launch-time pinning: a queued run starts only while its spec still resolves to what was approved.

An approval pins the spec hash (the five parameters, the task ids, the task file's content). A run
can wait in the queue for hours; if the suite file changed meanwhile, the approval no longer
describes what would run. So before a run's first lane the spec is resolved again, and a run whose
hash differs is voided: cancelled before anything starts, audited, and its card says why. Runs that
already started are not checked again; their lanes were launched from the pinned spec.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.catalog import Catalog
from bot.domain.clock import Clock
from bot.domain.errors import InfraError, UserInputError
from bot.domain.events import RunVoided
from bot.domain.mrkdwn import clip
from bot.domain.redact import Redactor
from bot.domain.spec import RunSpec
from bot.domain.states import RunState
from bot.domain.words import plural
from bot.store import audit, lanes, outbox, runs, summaries
from bot.store.db import Store
from bot.store.records import Run, RunRequest

log = logging.getLogger(__name__)
DRIFT_SHOWN = 500  # why a run was voided, in its thread

VOID_NOTE = "the approval is void: the suite file or task list changed after it was approved"


@dataclass(frozen=True)
class Verdict:
    run: Run
    request: RunRequest
    drift: str | None = None  # why the approval is void; None when the run may start
    unreadable: bool = False  # the checkout could not be read: neither start nor void, ask again


class LaunchPins:
    def __init__(self, store: Store, catalog: Catalog, clock: Clock, redact: Redactor) -> None:
        self._redact = redact  # the drift may quote the checkout's files, which reach the thread
        self._store = store
        self._catalog = catalog
        self._clock = clock
        self._warned: dict[int, str] = {}  # run id → the last unreadable-checkout warning logged for it

    async def verify(self, run_id: int) -> bool:
        """True when this queued run may start now; a drifted one is voided on the way."""
        async with self._store.read() as session:
            queued = await runs.queued_request(session, run_id)
        if queued is None:
            return False  # started, cancelled or voided meanwhile
        verdict = await asyncio.to_thread(self._judge, *queued)
        if verdict.drift:
            async with self._store.write() as session:
                await _void_run(session, verdict, self._clock.now(), self._redact)
        return verdict.drift is None and not verdict.unreadable

    def _judge(self, run: Run, request: RunRequest) -> Verdict:
        approved = request.spec
        try:
            # The approved spec's parallel stands in for the default: a changed default is no drift.
            spec = self._catalog.resolve(approved.params, approved.parallel)
        except UserInputError as exc:
            return Verdict(run, request, drift=f"it no longer resolves in the CSB checkout: {exc.message}")
        except InfraError as exc:
            if self._warned.get(run.id) != str(exc):  # once per cause, not every tick
                self._warned[run.id] = str(exc)
                log.warning("run %s waits: its spec cannot be checked: %s", run.id, exc)
            return Verdict(run, request, unreadable=True)
        self._warned.pop(run.id, None)
        if spec.spec_hash() != request.spec_hash:
            return Verdict(run, request, drift=describe_drift(approved, spec))
        return Verdict(run, request)


def describe_drift(approved: RunSpec, current: RunSpec) -> str:
    """What changed between the approved spec and the checkout now, in words for the audit trail."""
    approved_ids = {task.task_id for task in approved.tasks}
    current_ids = {task.task_id for task in current.tasks}
    changes = []
    if current.task_file != approved.task_file:
        changes.append(f"the default task file is now `{current.task_file}`, not `{approved.task_file}`")
    elif current.task_file_sha256 != approved.task_file_sha256:
        changes.append(f"`{approved.task_file}` changed")
    added, removed = len(current_ids - approved_ids), len(approved_ids - current_ids)
    if added or removed:
        changes.append(f"{plural(added, 'task')} added and {removed} removed")
    if current.lanes != approved.lanes:
        changes.append("the lane configs changed")
    return "spec drift: " + ("; ".join(changes) or "the resolved spec hash differs")


async def _void_run(session: AsyncSession, verdict: Verdict, now: datetime, redact: Redactor) -> None:
    """One guarded transition (queued → cancelled), so a run that started meanwhile is left alone."""
    run_id = verdict.run.id
    voided = await runs.move_run(
        session,
        run_id,
        from_states=[RunState.QUEUED],
        to=RunState.CANCELLED,
        stop_reason=VOID_NOTE,
        stop_requested_at=now,
        finished_at=now,
    )
    if not voided:
        return
    dropped = await lanes.cancel_queued_lanes(session, run_id, now, reason=f"not started: {VOID_NOTE}")
    await summaries.record(session, run_id)  # closed: summed with its lanes cancelled, in this transaction
    await audit.record_run(session, verdict.run, "voided", now, reason=f"at launch, {verdict.drift}")
    drift = clip(redact(verdict.drift or ""), DRIFT_SHOWN)
    event = RunVoided(run_id=run_id, note=VOID_NOTE, drift=drift, dropped=dropped)
    await outbox.tell_run(session, run_id, what="voided", event=event, now=now)
    log.warning("run %s voided before launch: %s", run_id, verdict.drift)
