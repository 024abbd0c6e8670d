"""The approval gate's decisions: approve (N of M, re-checked and pinned), reject, expire, remind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain import events, outbox_keys
from bot.domain.clock import Clock
from bot.domain.errors import CsbBotError
from bot.domain.events import StillWaiting
from bot.domain.policy import (
    BOT_ACTOR,
    Actor,
    PolicyConfig,
    approvals_needed,
    may_approve,
    may_control,
    reminder_cutoffs,
    reminder_due,
)
from bot.domain.spec import Category
from bot.domain.states import RequestState
from bot.services.checks import CheckRunner, RequestChecks
from bot.services.control_args import check_reason
from bot.services.refusals import record_refusal
from bot.services.requests import RunRequestService, bot_decides
from bot.services.run_plan import plan_run
from bot.settings import EngineConfig
from bot.store import approvals, audit, outbox, requests, runs
from bot.store.db import Store
from bot.store.records import OutboxKind, RunRequest


class Outcome(StrEnum):
    LAUNCHED = "launched"  # the last approval needed: the run is queued
    RECORDED = "recorded"  # an approval counted, more are needed
    REJECTED = "rejected"
    REFUSED = "refused"  # nothing changed; `message` says why


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    message: str | None = None


class ApprovalService:
    def __init__(
        self,
        store: Store,
        requests_service: RunRequestService,
        checks: CheckRunner,
        policy: PolicyConfig,
        engine_config: EngineConfig,
        clock: Clock,
    ) -> None:
        self._store = store
        self._requests = requests_service
        self._checks = checks
        self._policy = policy
        self._engine = engine_config
        self._clock = clock

    async def approve(self, request_id: int, revision: int | None, actor: Actor) -> Decision:
        """`revision` is the one on the card that was clicked: the approval counts for it or not at all."""
        request = await self._requests.load(request_id)
        decision = await self._approve(request, revision, actor)
        if decision.outcome is Outcome.REFUSED:
            await self._refused(request, "approve", actor, decision.message or "")
        return decision

    async def _refused(self, request: RunRequest, action: str, actor: Actor, reason: str) -> None:
        await record_refusal(
            self._store, self._clock, request, action=action, actor=actor.user_id, reason=reason
        )

    async def _approve(self, request: RunRequest, revision: int | None, actor: Actor) -> Decision:
        request_id = request.id
        refusal = await self._refusal(request, revision, actor)
        if refusal:
            return Decision(Outcome.REFUSED, refusal)
        async with self._store.read() as session:
            done = await approvals.approvers(session, request_id, request.revision)
        if len(done) + 1 >= approvals_needed(self._policy, _category(request)):
            refusal = await self._recheck(request)
            if refusal:
                return Decision(Outcome.REFUSED, refusal)
            # The re-run checks hold a new estimate: asked again whether this approver may pass the budget.
            request = await self._requests.load(request_id)
            refusal = await self._refusal(request, revision, actor)
            if refusal:
                return Decision(Outcome.REFUSED, refusal)
        return await self._record_approval(request, actor)

    async def _refusal(self, request: RunRequest, revision: int | None, actor: Actor) -> str | None:
        """Why this click changes nothing, read from the database at click time; None when it may count."""
        if request.state is not RequestState.PENDING:
            return _already_decided(request)
        if request.expires_at and self._clock.now() >= request.expires_at:
            await self.expire_due()
            return f"Request #{request.id} has expired and can no longer be approved; request it again."
        if revision != request.revision:
            return out_of_date(request)
        checks = RequestChecks.model_validate_json(request.checks_json)
        async with self._store.read() as session:
            done = set(await approvals.approvers(session, request.id, request.revision))
            editors = await audit.editors(session, request.id)
        if actor.user_id in done:
            return f"You already approved request #{request.id}; it needs another approver."
        # The budget is measured now, not as the card was drawn: lanes may have spent since.
        budget = await self._checks.budget_now(request.spec, checks.estimate)
        if budget != checks.budget:  # the card shows the lines this click was judged by
            await self._store_budget(request, checks.model_copy(update={"budget": budget}))
        verdict = may_approve(
            self._policy,
            _category(request),
            actor,
            request.requester,
            done,
            checks.unpaired_override,
            editors=editors,
            budget_override=budget.blocked,
        )
        if not verdict.allowed:
            return verdict.reason
        if checks.blocking_reasons:
            return "Approve is refused: " + "; ".join(checks.blocking_reasons)
        return None

    async def _store_budget(self, request: RunRequest, checks: RequestChecks) -> None:
        async with self._store.write() as session:
            await requests.set_checks(session, request.id, request.revision, checks.model_dump_json())
            await outbox.redraw_card(session, request.id, self._clock.now())

    async def _recheck(self, request: RunRequest) -> str | None:
        """Before the deciding approval: resolve again (pinning) and re-run the checks."""
        approved = request.spec
        try:
            spec = await self._requests.resolve(approved.params)
        except CsbBotError as exc:
            return f"The request no longer resolves in the CSB checkout: {exc}"
        if spec.spec_hash() != request.spec_hash:
            return await self._void_for_drift(request)
        checks = await self._checks.run(spec)
        async with self._store.write() as session:
            await requests.set_checks(session, request.id, request.revision, checks.model_dump_json())
            await outbox.redraw_card(session, request.id, self._clock.now())
        if checks.blocking_reasons:
            return "Approve is refused by the preflight re-run: " + "; ".join(checks.blocking_reasons)
        return None

    async def _void_for_drift(self, request: RunRequest) -> str:
        now = self._clock.now()
        note = "The suite file or task folders changed since this was requested: approvals are void."
        async with self._store.write() as session:
            await requests.decide(
                session,
                request.id,
                to=RequestState.REJECTED,
                actor=BOT_ACTOR,
                now=now,
                revision=request.revision,
                reason=f"{note} Request it again to run the current tasks.",
            )
            await audit.record(
                session,
                request_id=request.id,
                action="voided",
                actor=BOT_ACTOR,
                at=now,
                spec_hash=request.spec_hash,
                revision=request.revision,
                reason="spec drift",
            )
            await outbox.redraw_card(session, request.id, now)
        return note

    async def _record_approval(self, request: RunRequest, actor: Actor) -> Decision:
        now = self._clock.now()
        needed = approvals_needed(self._policy, _category(request))
        checks = RequestChecks.model_validate_json(request.checks_json)
        override = checks.unpaired_override
        over_budget = (await self._checks.budget_now(request.spec, checks.estimate)).blocked
        if over_budget:  # past the line since this click was judged: only an override approver counts
            verdict = may_approve(
                self._policy, _category(request), actor, request.requester, budget_override=True
            )
            if not verdict.allowed:
                return Decision(Outcome.REFUSED, verdict.reason)
        async with self._store.write() as session:
            if not await requests.hold_revision(session, request.id, request.revision):
                current = await requests.get_request(session, request.id)
                assert current is not None
                if current.state is not RequestState.PENDING:
                    return Decision(Outcome.REFUSED, _already_decided(current))
                return Decision(Outcome.REFUSED, out_of_date(current))
            if not await approvals.add_approval(session, request.id, request.revision, actor.user_id, now):
                return Decision(Outcome.REFUSED, f"You already approved request #{request.id}.")
            count = len(await approvals.approvers(session, request.id, request.revision))
            await audit.record(
                session,
                request_id=request.id,
                action="approval",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
                revision=request.revision,
                reason=f"{count} of {needed}"
                + ("; unpaired override" if override else "")
                + ("; budget override" if over_budget else ""),
            )
            if count >= needed:
                if over_budget:
                    await requests.mark_budget_override(session, request.id, request.revision, actor.user_id)
                await self._queue_run(session, request, actor.user_id, now)
            await outbox.redraw_card(session, request.id, now)
        return Decision(Outcome.LAUNCHED if count >= needed else Outcome.RECORDED)

    async def _queue_run(self, session: AsyncSession, request: RunRequest, actor: str, now: datetime) -> None:
        """The deciding approval: approved and queued in one transaction, so no approval lacks its run."""
        if not await requests.decide(
            session, request.id, to=RequestState.APPROVED, actor=actor, now=now, revision=request.revision
        ):
            return
        planned, lanes = plan_run(
            request.spec,
            request.id,
            now,
            timeout_multiplier=self._engine.timeout_multiplier,
            default_timeout_sec=self._engine.default_lane_timeout_sec,
        )
        run = await runs.create_run(session, planned, lanes)
        await audit.record(
            session,
            request_id=request.id,
            run_id=run.id,
            action="approved",
            actor=actor,
            at=now,
            spec_hash=request.spec_hash,
            revision=request.revision,
        )

    async def reject(self, request_id: int, revision: int, actor: Actor, reason: str) -> Decision:
        check_reason(reason)
        request = await self._requests.load(request_id)
        if request.state is not RequestState.PENDING:
            return Decision(Outcome.REFUSED, f"Request #{request_id} was already {request.state.value}.")
        verdict = may_control(self._policy, _category(request), actor, request.requester, action="reject")
        if not verdict.allowed:
            await self._refused(request, "reject", actor, verdict.reason)
            return Decision(Outcome.REFUSED, verdict.reason)
        now = self._clock.now()
        async with self._store.write() as session:
            if not await requests.decide(
                session,
                request_id,
                to=RequestState.REJECTED,
                actor=actor.user_id,
                now=now,
                revision=revision,
                reason=reason,
            ):
                return Decision(
                    Outcome.REFUSED, f"Request #{request_id} changed meanwhile; nothing was rejected."
                )
            await audit.record(
                session,
                request_id=request_id,
                action="rejected",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
                revision=revision,
                reason=reason,
            )
            await outbox.redraw_card(session, request_id, now)
        return Decision(Outcome.REJECTED)

    async def expire_due(self) -> int:
        """Pending requests past their expiry become EXPIRED; never auto-approved. Returns how many."""
        now = self._clock.now()
        expired = 0
        async with self._store.write() as session:
            for request in await requests.pending_due(session, now):
                if not await bot_decides(
                    session,
                    request,
                    to=RequestState.EXPIRED,
                    action="expired",
                    now=now,
                    reason="no decision before the expiry",
                    audit_reason=None,
                ):
                    continue
                expired += 1
                await outbox.redraw_card(session, request.id, now)
        return expired

    async def remind_due(self) -> int:
        """One reminder per pending request, in its thread, once it has waited the policy's time."""
        now = self._clock.now()
        reminded = 0
        async with self._store.write() as session:
            for request in await requests.waiting(session, reminder_cutoffs(now, self._policy)):
                category = Category(request.category)
                if not reminder_due(request.created_at, request.reminded_at, now, self._policy, category):
                    continue
                await requests.mark_reminded(session, request.id, now)
                reminded += 1
                await outbox.enqueue(
                    session,
                    kind=OutboxKind.NOTICE,
                    target=outbox_keys.reminder(request.id),
                    now=now,
                    request_id=request.id,
                    text=events.dump(_still_waiting(request.id, self._policy, category)),
                )
        return reminded


def _category(request: RunRequest) -> Category:
    return Category(request.category)


def _still_waiting(request_id: int, policy: PolicyConfig, category: Category) -> StillWaiting:
    approvers = policy.for_category(category).approvers
    return StillWaiting(
        request_id=request_id,
        anyone=approvers.anyone,
        users=tuple(approvers.users),
        usergroups=tuple(approvers.usergroups),
    )


def out_of_date(request: RunRequest) -> str:
    return (
        f"This card is out of date; request #{request.id} is now revision {request.revision}. "
        "Look at the card again: your click changed nothing."
    )


def _already_decided(request: RunRequest) -> str:
    by = f" by <@{request.decided_by}>" if request.decided_by and request.decided_by != BOT_ACTOR else ""
    return f"Request #{request.id} was already {request.state.value}{by}; your click changed nothing."
