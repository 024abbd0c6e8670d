"""`Stop and retry` on a stalled lane's note: whoever may cancel the run asks the engine to stop that lane
and retry it elsewhere as an infrastructure failure.

Only rows change here: the lane is marked (`stop_wanted`), and the watcher sends its SIGINT on its next
look; the attempt then ends and takes the engine's one retry path (backoff, `retry_limit`, another
account). Two clicks mark it once.
"""

from __future__ import annotations

from bot.domain.clock import Clock
from bot.domain.errors import PolicyError, UserInputError
from bot.domain.events import LaneRestarted
from bot.domain.policy import Actor, PolicyConfig, may_control
from bot.domain.spec import Category
from bot.domain.stops import STOP_STALL
from bot.services.refusals import record_refusal
from bot.store import audit, lanes, outbox, requests, runs
from bot.store.db import Store
from bot.store.records import Lane

ACTION = "stop and retry lanes of"  # "only … may stop and retry lanes of staging runs"


class LaneRestartService:
    def __init__(self, store: Store, policy: PolicyConfig, clock: Clock) -> None:
        self._store = store
        self._policy = policy
        self._clock = clock

    async def request_of(self, lane_id: int) -> int:
        """The request (and run) the lane belongs to: a click is checked against it before anything."""
        async with self._store.read() as session:
            lane = await lanes.get_lane(session, lane_id)
        if lane is None:
            raise UserInputError("this lane is not known to the bot any more")
        return runs.request_id_of(lane.run_id)

    async def stop_and_retry(self, lane_id: int, actor: Actor) -> LaneRestarted:
        lane, request_id = await self._lane(lane_id)
        async with self._store.read() as session:
            request = await requests.get_request(session, request_id)
        assert request is not None
        verdict = may_control(self._policy, Category(request.category), actor, request.requester, ACTION)
        if not verdict.allowed:
            await record_refusal(
                self._store, self._clock, request, action=ACTION, actor=actor.user_id, reason=verdict.reason,
                run_id=lane.run_id,
            )  # fmt: skip
            raise PolicyError(verdict.reason)
        name = f"{lane.task_id}/{lane.role}"
        now = self._clock.now()
        async with self._store.write() as session:
            asked = await lanes.want_stop(session, STOP_STALL, lane_id=lane_id)
            if not asked:
                raise UserInputError(f"lane `{name}` is no longer running, or is already being stopped")
            await audit.record(
                session,
                request_id=request.id,
                run_id=lane.run_id,
                action="lane stop and retry",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
                revision=request.revision,
                reason=f"{name} attempt {lane.attempt}",
            )
            event = LaneRestarted(run_id=lane.run_id, user=actor.user_id, lanes=(name,))
            await outbox.tell_run(session, lane.run_id, what=f"restart-{lane_id}", event=event, now=now)
        return event

    async def _lane(self, lane_id: int) -> tuple[Lane, int]:
        async with self._store.read() as session:
            lane = await lanes.get_lane(session, lane_id)
        if lane is None:
            raise UserInputError("this lane is not known to the bot any more")
        return lane, runs.request_id_of(lane.run_id)
