"""Run requests from submission to decision: the approval gate's state changes, each in one transaction."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum

from bot.csb.catalog import Catalog
from bot.domain.clock import Clock
from bot.domain.command_line import USAGE
from bot.domain.errors import UserInputError
from bot.domain.spec import RunParams, RunSpec
from bot.services.run_plan import plan_run
from bot.settings import EngineConfig
from bot.store import audit, outbox, requests, runs
from bot.store.db import Store
from bot.store.models import OutboxKind, RequestState, RunRequest


class DecisionResult(StrEnum):
    DONE = "done"
    ALREADY_DECIDED = "already_decided"
    NOT_FOUND = "not_found"


@dataclass(frozen=True)
class Decision:
    result: DecisionResult
    state: RequestState | None = None
    decided_by: str | None = None


def card_target(request_id: int) -> str:
    return f"card:{request_id}"


class RunRequestService:
    def __init__(self, store: Store, catalog: Catalog, engine_config: EngineConfig, clock: Clock) -> None:
        self._store = store
        self._catalog = catalog
        self._engine = engine_config
        self._clock = clock

    async def resolve(self, params: RunParams) -> RunSpec:
        """Resolve against the checkout off the event loop: it reads the suite file and task folders."""
        spec = await asyncio.to_thread(self._catalog.resolve, params, self._engine.default_parallel)
        if len(spec.lanes) > spec.parallel:
            raise UserInputError(
                f"a {params.mode.value} run starts both lanes of a task together, so it needs "
                f"`--parallel` of at least {len(spec.lanes)} (got {spec.parallel})",
                hint=USAGE,
            )
        return spec

    async def submit(
        self, spec: RunSpec, *, requester: str, channel_id: str, response_url: str | None
    ) -> int:
        """Record a pending request and queue its approval card."""
        now = self._clock.now()
        async with self._store.write() as session:
            request = await requests.create_request(
                session,
                RunRequest(
                    spec_json=spec.model_dump_json(),
                    spec_hash=spec.spec_hash(),
                    requester=requester,
                    channel_id=channel_id,
                    response_url=response_url,
                    created_at=now,
                ),
            )
            assert request.id is not None
            await audit.record(
                session,
                request_id=request.id,
                action="requested",
                actor=requester,
                at=now,
                spec_hash=request.spec_hash,
            )
            await outbox.enqueue(
                session, kind=OutboxKind.CARD, target=card_target(request.id), now=now, request_id=request.id
            )
        return request.id

    async def approve(self, request_id: int, actor: str) -> Decision:
        """Approve and queue the run in the same transaction, so an approval is never without its run."""
        now = self._clock.now()
        async with self._store.write() as session:
            request = await requests.get_request(session, request_id)
            if request is None:
                return Decision(DecisionResult.NOT_FOUND)
            if not await requests.decide(session, request_id, to=RequestState.APPROVED, actor=actor, now=now):
                return Decision(DecisionResult.ALREADY_DECIDED, request.state, request.decided_by)
            spec = RunSpec.model_validate_json(request.spec_json)
            run, lanes = plan_run(
                spec,
                request_id,
                now,
                timeout_multiplier=self._engine.timeout_multiplier,
                default_timeout_sec=self._engine.default_lane_timeout_sec,
            )
            await runs.create_run(session, run, lanes)
            await audit.record(
                session,
                request_id=request_id,
                run_id=run.id,
                action="approved",
                actor=actor,
                at=now,
                spec_hash=request.spec_hash,
            )
            await outbox.enqueue(
                session, kind=OutboxKind.CARD, target=card_target(request_id), now=now, request_id=request_id
            )
        return Decision(DecisionResult.DONE, RequestState.APPROVED, actor)

    async def reject(self, request_id: int, actor: str, reason: str | None = None) -> Decision:
        now = self._clock.now()
        async with self._store.write() as session:
            request = await requests.get_request(session, request_id)
            if request is None:
                return Decision(DecisionResult.NOT_FOUND)
            if not await requests.decide(
                session, request_id, to=RequestState.REJECTED, actor=actor, now=now, reason=reason
            ):
                return Decision(DecisionResult.ALREADY_DECIDED, request.state, request.decided_by)
            await audit.record(
                session,
                request_id=request_id,
                action="rejected",
                actor=actor,
                at=now,
                spec_hash=request.spec_hash,
                reason=reason,
            )
            await outbox.enqueue(
                session, kind=OutboxKind.CARD, target=card_target(request_id), now=now, request_id=request_id
            )
        return Decision(DecisionResult.DONE, RequestState.REJECTED, actor)
