"""One promotion at a time touches `runs/official`: the lock row, raced by two bot processes' sessions on
SQLite and PostgreSQL; the guarded moves of a promotion; and `[policy.promote]`'s defaults."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from engine_kit import engine_kit

from bot.domain.policy import Actor, PolicyConfig
from bot.domain.promotion_flow import PromotionState
from bot.domain.promotion_policy import may_approve_promotion
from bot.store import promotions
from bot.store.db import Store


async def _approved(store: Store, run_id: int, now: datetime) -> int:
    async with store.write() as session:
        row = await promotions.create(
            session,
            run_id=run_id,
            requester="U0ALICE",
            channel_id="C0PLAY",
            force=False,
            quarantine=False,
            digest="d",
            preview_json="{}",
            now=now,
        )
        assert await promotions.move(
            session,
            row.id,
            expected=PromotionState.PENDING,
            to=PromotionState.APPROVED,
            now=now,
        )
        return row.id


async def test_two_processes_claiming_two_promotions_at_once_get_one(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        run_a, run_b = await kit.approve(), await kit.approve()
        now = kit.clock.now()
        first, second = await _approved(kit.store, run_a, now), await _approved(kit.store, run_b, now)
        other = Store(db_url)  # a second bot process's store on the same database
        try:

            async def claim(store: Store, promotion_id: int) -> bool:
                async with store.write() as session:
                    return await promotions.claim(session, promotion_id, now)

            won = await asyncio.gather(claim(kit.store, first), claim(other, second))
            assert sorted(won) == [False, True]
            winner = first if won[0] else second
            loser = second if won[0] else first
            async with kit.store.read() as session:
                assert await promotions.lock_holder(session) == winner
                waiting = await promotions.get(session, loser)
                assert waiting is not None and waiting.state is PromotionState.APPROVED
            async with kit.store.write() as session:
                assert await promotions.end(session, winner, PromotionState.PROMOTED, now)
                assert not await promotions.end(session, winner, PromotionState.UNDONE, now)  # once
            assert await claim(other, loser)  # runs/official is free again: the other one's turn
        finally:
            await other.close()


def test_promotion_approvers_default_to_officials_never_the_requester() -> None:
    policy = PolicyConfig.model_validate({"official": {"approvers": {"users": ["U0BOB", "U0CAROL"]}}})
    assert policy.promote.approvals_required == 1 and not policy.promote.self_approval
    bob = Actor(user_id="U0BOB")
    assert may_approve_promotion(policy, bob, "U0ALICE", (), False).allowed
    assert "yourself" in may_approve_promotion(policy, bob, "U0BOB", (), False).reason
    assert not may_approve_promotion(policy, Actor(user_id="U0DAN"), "U0ALICE", (), False).allowed
    # --force: official's override approvers, shipped empty: no one, until listed.
    assert "no one may approve that" in may_approve_promotion(policy, bob, "U0ALICE", (), True).reason
    listed = PolicyConfig.model_validate(
        {"promote": {"approvers": {"users": ["U0DAN"]}, "approvals_required": 2}}
    )
    assert listed.promote.approvals_required == 2
    assert may_approve_promotion(listed, Actor(user_id="U0DAN"), "U0ALICE", (), False).allowed
