"""A promotion's approval gate: asked for (its card shows CSB's dry run), approved N of M, or rejected.

The card binds to what it showed: the digest of the run's files and of the MANIFEST entries its diff
touches when it was drawn (`bot.csb.promotion.digest`). The deciding approval draws the dry run again;
when the digest differs the approvals are void, as for runs. The execution itself is the engine's
(`bot.engine.promotion_runner`), which picks up APPROVED promotions and checks the same digest again
before its first step.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.promotion import digest
from bot.domain.clock import Clock
from bot.domain.errors import CsbBotError, UserInputError
from bot.domain.policy import Actor, PolicyConfig
from bot.domain.promotion import PromotionPreview
from bot.domain.promotion_flow import PromotionCardView, PromotionState, blocked
from bot.domain.promotion_policy import (
    may_approve_promotion,
    may_request_promotion,
    promotion_approvals_needed,
)
from bot.services.promotion import PromotionService
from bot.services.queries import Viewer
from bot.services.refusals import REFUSED
from bot.store import audit, outbox, promotions, requests, runs
from bot.store.db import Store
from bot.store.records import Promotion


class PromotionGate:
    def __init__(self, store: Store, service: PromotionService, policy: PolicyConfig, clock: Clock) -> None:
        self._store = store
        self._service = service
        self._policy = policy
        self._clock = clock

    async def request(self, run_id: int, viewer: Viewer, *, force: bool, quarantine: bool) -> int:
        """A pending promotion whose card the notifier posts; UserInputError or PolicyError when refused."""
        may_request_promotion(self._policy, viewer.actor, viewer.channel_id).require()
        async with self._store.read() as session:
            under_way = promotions.blocking(await promotions.of_run(session, run_id))
        if under_way is not None:
            raise UserInputError(_blocked_by(run_id, under_way))
        preview = await self._service.preview(run_id, viewer, force=force)
        now = self._clock.now()
        async with self._store.write() as session:
            promotion = await promotions.create(
                session,
                run_id=run_id,
                requester=viewer.actor.user_id,
                channel_id=viewer.channel_id,
                force=force,
                quarantine=quarantine,
                digest=preview.digest,
                preview_json=preview.model_dump_json(),
                now=now,
            )
            note = "; ".join(filter(None, ["--force" if force else "", "--quarantine" if quarantine else ""]))
            await _audit(session, promotion, "promotion requested", viewer.actor.user_id, now, note or None)
            await outbox.redraw_promotion(session, promotion.id, run_id, now)
        return promotion.id

    async def approve(self, promotion_id: int, actor: Actor) -> str | None:
        """None when the approval counted; else why not, for the clicker."""
        promotion = await self._load(promotion_id)
        if promotion.state is not PromotionState.PENDING:
            return f"Promotion #{promotion_id} is {promotion.state.value}; your click changed nothing."
        preview = PromotionPreview.model_validate_json(promotion.preview_json)
        if blocked(preview, promotion.force):
            return f"Promotion #{promotion_id} is blocked by what its card shows; it cannot be approved."
        done = promotions.approvers(promotion)
        verdict = may_approve_promotion(self._policy, actor, promotion.requester, done, promotion.force)
        if not verdict.allowed:
            await self._refused(promotion, actor, verdict.reason, "promotion approve")
            return f"Approve is refused: {verdict.reason}."
        needed = promotion_approvals_needed(self._policy)
        if len(done) + 1 >= needed:
            void = await self._recheck(promotion)
            if void:
                return void
        now = self._clock.now()
        async with self._store.write() as session:
            approvers = [*done, actor.user_id]
            if not await promotions.add_approval(
                session, promotion_id, approvers, promotion.approvers_json, now
            ):
                return f"Promotion #{promotion_id} changed meanwhile; look at its card again."
            reason = f"{len(approvers)} of {needed}" + ("; --force" if promotion.force else "")
            await _audit(session, promotion, "promotion approval", actor.user_id, now, reason)
            if len(approvers) >= needed:
                await promotions.move(
                    session,
                    promotion_id,
                    expected=PromotionState.PENDING,
                    to=PromotionState.APPROVED,
                    now=now,
                    decided_by=actor.user_id,
                )
                await _audit(session, promotion, "promotion approved", actor.user_id, now, None)
            await outbox.redraw_promotion(session, promotion_id, promotion.run_id, now)
        return None

    async def reject(self, promotion_id: int, actor: Actor) -> str | None:
        """Anyone who may approve it, and its requester, may reject a pending promotion."""
        promotion = await self._load(promotion_id)
        if promotion.state is not PromotionState.PENDING:
            return f"Promotion #{promotion_id} is {promotion.state.value}; your click changed nothing."
        if actor.user_id != promotion.requester:
            verdict = may_approve_promotion(self._policy, actor, "", (), False)
            if not verdict.allowed:
                await self._refused(promotion, actor, verdict.reason, "promotion reject")
                return f"Reject is refused: {verdict.reason}."
        now = self._clock.now()
        async with self._store.write() as session:
            if not await promotions.move(
                session,
                promotion_id,
                expected=PromotionState.PENDING,
                to=PromotionState.REJECTED,
                now=now,
                decided_by=actor.user_id,
            ):
                return f"Promotion #{promotion_id} changed meanwhile; nothing was rejected."
            await _audit(session, promotion, "promotion rejected", actor.user_id, now, None)
            await outbox.redraw_promotion(session, promotion_id, promotion.run_id, now)
        return None

    async def _recheck(self, promotion: Promotion) -> str | None:
        """Before the deciding approval: the dry run again; another digest voids the promotion."""
        try:
            fresh = await self._service.current(promotion.run_id, force=promotion.force)
            drift = None if fresh.digest == promotion.digest else _drift(promotion.digest, fresh)
        except CsbBotError as exc:
            drift = str(exc)
        if drift is None:
            return None
        now = self._clock.now()
        async with self._store.write() as session:
            if await promotions.move(
                session,
                promotion.id,
                expected=PromotionState.PENDING,
                to=PromotionState.VOID,
                now=now,
                error=f"{drift} since the card was drawn",
            ):
                await _audit(session, promotion, "promotion voided", "csb-bot", now, drift)
                await outbox.redraw_promotion(session, promotion.id, promotion.run_id, now)
        return (
            f"Promotion #{promotion.id} is void: {drift} since its card was drawn. "
            f"Ask again with /csb promote {promotion.run_id} to see the current state."
        )

    async def _refused(self, promotion: Promotion, actor: Actor, reason: str, action: str) -> None:
        now = self._clock.now()
        async with self._store.write() as session:
            await _audit(session, promotion, f"{REFUSED}{action}", actor.user_id, now, reason)

    async def _load(self, promotion_id: int) -> Promotion:
        async with self._store.read() as session:
            promotion = await promotions.get(session, promotion_id)
        if promotion is None:
            raise UserInputError(f"there is no promotion #{promotion_id}")
        return promotion


def card_view(promotion: Promotion, policy: PolicyConfig) -> PromotionCardView:
    """What the promotion's card shows, from its row."""
    return PromotionCardView(
        promotion_id=promotion.id,
        run_id=promotion.run_id,
        requester=promotion.requester,
        state=promotion.state,
        preview=PromotionPreview.model_validate_json(promotion.preview_json),
        force=promotion.force,
        quarantine=promotion.quarantine,
        approvers=tuple(promotions.approvers(promotion)),
        approvals_needed=promotion_approvals_needed(policy),
        journal=promotions.entries(promotion),
        error=promotion.error,
        decided_by=promotion.decided_by,
        after_restart=promotion.after_restart,
    )


def _drift(shown: str, fresh: PromotionPreview) -> str:
    """What changed since the card was drawn, told from the fresh dry run's digest."""
    files, _, entries = fresh.digest.partition(".")
    now = digest.ShownDigest(files=files, entries=entries, problem=fresh.manifest_problem)
    return digest.drift(shown, now) or "the digest changed"


def _blocked_by(run_id: int, promotion: Promotion) -> str:
    if promotion.state is PromotionState.PROMOTED:
        return f"run #{run_id} was promoted already (promotion #{promotion.id}); it cannot be promoted again"
    return f"run #{run_id} has promotion #{promotion.id} under way ({promotion.state.value}); see its card"


async def _audit(
    session: AsyncSession, promotion: Promotion, action: str, actor: str, at: datetime, reason: str | None
) -> None:
    run = await runs.get_run(session, promotion.run_id)
    assert run is not None
    request = await requests.get_request(session, run.request_id)
    assert request is not None
    await audit.record(
        session,
        request_id=run.request_id,
        run_id=run.id,
        action=action,
        actor=actor,
        at=at,
        spec_hash=request.spec_hash,
        revision=request.revision,
        reason=reason,
    )
