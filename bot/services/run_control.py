"""Cancel, drain, resume and rerun failed: who may (policy, checked at click time) and the state changes.

The service only writes rows: the engine sees a cancelling run on its next tick and stops its lanes
(SIGINT, a grace period, SIGKILL); a draining run starts nothing new and closes when its running lanes
end. A rerun is a new request through the same approval gate, over a selection file of the tasks.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.harbor_run import run_folder_names
from bot.csb.paths import lane_path
from bot.domain.causes import pair_causes
from bot.domain.clock import Clock
from bot.domain.command_line import CANCEL_USAGE, INVALID, STATUS_USAGE
from bot.domain.errors import PolicyError, UserInputError
from bot.domain.events import Event, RunResumed, RunStopped
from bot.domain.integrity import pair_invalidity
from bot.domain.mrkdwn import clip
from bot.domain.outcome import LaneStatus
from bot.domain.policy import Actor, PolicyConfig, may_control
from bot.domain.promotion_flow import OPEN_STATES
from bot.domain.spec import Category, RunParams, RunSpec
from bot.domain.states import (
    CANCELLABLE_RUN_STATES,
    SCORED_LANE_STATES,
    UNSTOPPED_RUN_STATES,
    RequestState,
    RunState,
)
from bot.domain.verdict import LaneVerdict, stored_verdict
from bot.domain.words import plural
from bot.services.control_args import check_reason
from bot.services.refusals import record_refusal
from bot.store import audit, lanes, outbox, promotions, requests, runs
from bot.store.db import Store
from bot.store.records import Lane, Run, RunRequest


class RequestSubmitter(Protocol):
    """The request service's two steps a rerun goes through, exactly as `/csb run` does."""

    async def resolve(self, params: RunParams) -> RunSpec: ...

    async def submit(
        self,
        spec: RunSpec,
        *,
        actor: Actor,
        channel_id: str,
        response_url: str | None,
        trigger_id: str | None = None,
    ) -> int: ...


@dataclass(frozen=True)
class StopTarget:
    """What the Cancel modal shows about the run it would stop."""

    run_id: int
    run_dir: str
    state: RunState
    running: int
    queued: int


class RunControlService:
    def __init__(
        self, store: Store, policy: PolicyConfig, clock: Clock, submitter: RequestSubmitter, repo: Path
    ) -> None:
        self._store = store
        self._policy = policy
        self._clock = clock
        self._submitter = submitter
        self._repo = repo

    async def stop_target(self, run_id: int, actor: Actor) -> StopTarget:
        """For the Cancel button: refuse before the modal opens when the click could not count."""
        run, request, lanes = await self._load(run_id)
        await self._authorize(run, request, actor, "cancel or drain")
        if run.state not in CANCELLABLE_RUN_STATES:
            raise UserInputError(f"run #{run_id} is already {run.state.value}; there is nothing to cancel")
        return StopTarget(
            run_id=run_id,
            run_dir=", ".join(run_folder_names(run.run_dir, (lane.suite for lane in lanes))),
            state=run.state,
            running=sum(1 for lane in lanes if lane.state is LaneStatus.RUNNING),
            queued=sum(1 for lane in lanes if lane.state is LaneStatus.QUEUED),
        )

    async def cancel(self, run_id: int, actor: Actor, reason: str, *, drain: bool) -> RunStopped:
        """Drain (no new pairs; running lanes finish) or cancel (running lanes are stopped too)."""
        reason = " ".join(reason.split())
        if not reason:
            raise UserInputError("say why: the reason is recorded in the audit trail", hint=CANCEL_USAGE)
        check_reason(reason, CANCEL_USAGE)
        verb, past = ("drain", "drained") if drain else ("cancel", "cancelled")
        run, request, _ = await self._load(run_id)
        await self._authorize(run, request, actor, verb)
        now = self._clock.now()
        async with self._store.write() as session:
            moved = await runs.move_run(
                session,
                run_id,
                from_states=UNSTOPPED_RUN_STATES if drain else CANCELLABLE_RUN_STATES,
                to=RunState.DRAINING if drain else RunState.CANCELLING,
                stopped_by=actor.user_id,
                stop_reason=reason,
                stop_requested_at=now,
            )
            if not moved:
                current = await runs.get_run(session, run_id)
                state = current.state.value if current else "gone"
                raise UserInputError(f"run #{run_id} is already {state}; nothing to {verb}")
            dropped = await lanes.cancel_queued_lanes(session, run_id, now, reason=f"not started: run {past}")
            running = await lanes.count_running(session, run_id)
            await audit.record(
                session,
                request_id=run.request_id,
                run_id=run_id,
                action=f"{verb} requested",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
                reason=reason,
            )
            stopped = RunStopped(
                run_id=run_id,
                user=actor.user_id,
                reason=clip(reason, STOP_REASON_SHOWN),
                drain=drain,
                dropped=dropped,
                running=running,
            )
            await self._notify(session, run_id, verb, stopped)
        return stopped

    async def resume(self, run_id: int, actor: Actor) -> RunResumed:
        """A paused run starts lanes again, with its infrastructure failure count started afresh."""
        run, request, _ = await self._load(run_id)
        await self._authorize(run, request, actor, "resume")
        now = self._clock.now()
        async with self._store.write() as session:
            if not await runs.move_run(
                session,
                run_id,
                from_states=[RunState.PAUSED],
                to=RunState.RUNNING,
                attempts_done=0,
                infra_failures=0,
                paused_reason=None,
            ):
                raise UserInputError(f"run #{run_id} is {run.state.value}, not paused")
            await audit.record(
                session,
                request_id=run.request_id,
                run_id=run_id,
                action="resumed",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
            )
            resumed = RunResumed(run_id=run_id, user=actor.user_id)
            await self._notify(session, run_id, "resume", resumed)
        return resumed

    async def _not_being_promoted(self, run_id: int) -> None:
        """A run whose folders a promotion is moving is left alone until the promotion has ended."""
        async with self._store.read() as session:
            under_way = [p for p in await promotions.of_run(session, run_id) if p.state in OPEN_STATES]
        if under_way:
            raise UserInputError(
                f"run #{run_id} is being promoted (promotion #{under_way[0].id}, "
                f"{under_way[0].state.value}); rerun it once the promotion has ended"
            )

    async def rerun(
        self,
        run_id: int,
        actor: Actor,
        *,
        only: Collection[LaneStatus],
        channel_id: str,
        response_url: str | None,
        causes: Collection[str] = (),
        invalid: bool = False,
        trigger_id: str | None = None,
    ) -> int:
        """A new request over the tasks with a lane in `only`, a lane whose cause is in `causes`, or (with
        `invalid`) a pair CSB's rules did not count; linked to the run; returns its id.

        The command (or click) Slack delivered again, or anyone sent again with its signed body, carries
        the same `trigger_id` and gets the request the first one made, as `/csb run` does: one card."""
        run, request, lanes = await self._load(run_id)
        await self._authorize(run, request, actor, "rerun")
        if not run.state.is_final:
            raise UserInputError(
                f"run #{run_id} is still {run.state.value}; rerun its failures once it has ended"
            )
        await self._not_being_promoted(run_id)
        picked = sorted({status.value for status in only} | set(causes) | ({INVALID} if invalid else set()))
        chosen = _rerun_lanes(lanes, only, frozenset(causes), invalid)
        if not chosen:
            kinds = ", ".join(picked)
            raise UserInputError(f"run #{run_id} has no task with a lane {kinds}; nothing to rerun")
        selection = await asyncio.to_thread(self._write_selection, run, chosen, picked)
        params = request.spec.params.model_copy(
            update={"suite": None, "suite_file": None, "selection_file": selection, "dry_run": False}
        )
        spec = await self._submitter.resolve(params)
        # The rerun's card goes where the run's was, also when the click came from the requester's DM.
        new_id = await self._submitter.submit(
            spec,
            actor=actor,
            channel_id=request.channel_id or channel_id,
            response_url=response_url,
            trigger_id=trigger_id,
        )
        await self._link(run, request, new_id, actor, len(chosen))
        return new_id

    async def _link(self, run: Run, request: RunRequest, new_id: int, actor: Actor, tasks: int) -> None:
        now = self._clock.now()
        async with self._store.write() as session:
            if not await runs.link_rerun(session, new_id, run.id):
                return  # a second delivery of the same rerun: the first one linked and recorded it
            await audit.record(
                session,
                request_id=request.id,
                run_id=run.id,
                action="rerun requested",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
                reason=f"request #{new_id} over {plural(tasks, 'task')}",
            )

    def _write_selection(self, run: Run, lanes: list[Lane], picked: list[str]) -> str:
        """A CSB selection file of the chosen tasks, beside the run's lane folders (CSB can run it too)."""
        kinds = "-".join(picked)
        rel = PurePosixPath(lanes[0].jobs_dir).parent / f"rerun_{kinds}.json"
        entries = [
            {"task_id": lane.task_id, "benchmark": lane.suite, "task_dir": _task_dir(lane.task_path)}
            for lane in lanes
        ]
        data = {"metadata": {"rerun_of": run.id, "statuses": picked}}
        path = lane_path(self._repo, lanes[0].jobs_dir, rel)  # inside the run's folder, resolved
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**data, "tasks": entries}, indent=2) + "\n")
        return rel.as_posix()

    async def _load(self, run_id: int) -> tuple[Run, RunRequest, list[Lane]]:
        async with self._store.read() as session:
            run = await runs.get_run(session, run_id)
            if run is None:
                raise _not_a_run(run_id, await requests.get_request(session, runs.request_id_of(run_id)))
            request = await requests.get_request(session, run.request_id)
            assert request is not None
            return run, request, await runs.run_lanes(session, run_id)

    async def _authorize(self, run: Run, request: RunRequest, actor: Actor, action: str) -> None:
        """A refusal is logged and kept in the run's audit trail before it is raised."""
        verdict = may_control(self._policy, Category(request.category), actor, request.requester, action)
        if not verdict.allowed:
            await record_refusal(
                self._store,
                self._clock,
                request,
                action=action,
                actor=actor.user_id,
                reason=verdict.reason,
                run_id=run.id,
            )
            raise PolicyError(verdict.reason)

    async def _notify(self, session: AsyncSession, run_id: int, what: str, event: Event) -> None:
        await outbox.tell_run(session, run_id, what=what, event=event, now=self._clock.now())


def _not_a_run(number: int, request: RunRequest | None) -> UserInputError:
    """`cancel 6` where #6 is still a request: say what it is and how to stop that instead."""
    if request is None:
        return UserInputError(f"there is no run #{number}", hint=STATUS_USAGE)
    if request.state is RequestState.PENDING:
        return UserInputError(
            f"#{number} is a request waiting for approval, not a run; to stop it, click Reject on its "
            "card (its requester, an approver or an admin may)",
            hint=STATUS_USAGE,
        )
    return UserInputError(
        f"#{number} is a request that was {request.state.value}; it never ran", hint=STATUS_USAGE
    )


STOP_REASON_SHOWN = 1500  # in the thread; the audit trail keeps the reason whole


def _rerun_lanes(
    lanes: list[Lane],
    only: Collection[LaneStatus],
    causes: frozenset[str] = frozenset(),
    invalid: bool = False,
) -> list[Lane]:
    """One lane per task that had a lane ending in `only` or failing of one of `causes` (the stored
    verdicts' causes, `bot.domain.causes`), or whose pair CSB's rules did not count; in task order."""
    pairs: dict[int, list[Lane]] = {}
    for lane in lanes:
        pairs.setdefault(lane.pair_index, []).append(lane)
    chosen: list[Lane] = []
    for index in sorted(pairs):
        pair = pairs[index]
        ends = {lane.role: (lane.state, stored_verdict(lane.verdict_json)) for lane in pair}
        lane_causes = {cause.id for _, cause in pair_causes(pair[0].task_id, ends) if cause is not None}
        by_status = any(lane.state in only for lane in pair)
        if by_status or lane_causes & causes or (invalid and _not_counted(ends)):
            chosen.append(next((lane for lane in pair if lane.state in only), pair[0]))
    return chosen


def _not_counted(ends: dict[str, tuple[LaneStatus, LaneVerdict | None]]) -> bool:
    """A complete pair that CSB's curation rules leave out of the statistics."""
    if len(ends) < 2 or any(state not in SCORED_LANE_STATES for state, _ in ends.values()):
        return False
    baseline, mcp = ends.get("baseline"), ends.get("mcp")
    return bool(pair_invalidity(baseline[1] if baseline else None, mcp[1] if mcp else None))


def _task_dir(task_path: str) -> str:
    """A selection file's `task_dir` is relative to `benchmarks/tasks/` (older checkouts: `benchmarks/`)."""
    for prefix in ("benchmarks/tasks/", "benchmarks/"):
        if task_path.startswith(prefix):
            return task_path[len(prefix) :]
    return task_path
