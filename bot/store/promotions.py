"""Promotions and the one lock on `runs/official`: every change of a promotion is a guarded UPDATE.

The lock is a row keyed by its scope: taking it is an INSERT that does nothing when the row is there,
so two bot processes sharing PostgreSQL never both hold it; it is given back (deleted) in the same
transaction that ends the promotion holding it.
"""

from __future__ import annotations

import json
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.promotion_flow import OPEN_STATES, JournalEntry, Phase, PromotionState
from bot.store import records
from bot.store.models import Promotion, PromotionLock
from bot.store.upsert import insert

OFFICIAL_SCOPE = "runs/official"
# How an executing promotion ends; VOID before its first step, when what its card showed changed.
_ENDED = (PromotionState.PROMOTED, PromotionState.UNDONE, PromotionState.LOST, PromotionState.VOID)


async def create(
    session: AsyncSession,
    *,
    run_id: int,
    requester: str,
    channel_id: str,
    force: bool,
    quarantine: bool,
    digest: str,
    preview_json: str,
    now: datetime,
) -> records.Promotion:
    row = Promotion(
        run_id=run_id,
        requester=requester,
        channel_id=channel_id,
        force=force,
        quarantine=quarantine,
        digest=digest,
        preview_json=preview_json,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    await session.flush()
    return records.Promotion.from_row(row)


async def get(session: AsyncSession, promotion_id: int) -> records.Promotion | None:
    row = await session.get(Promotion, promotion_id)
    return None if row is None else records.Promotion.from_row(row)


async def of_run(session: AsyncSession, run_id: int) -> list[records.Promotion]:
    rows = await session.execute(
        select(Promotion).where(col(Promotion.run_id) == run_id).order_by(col(Promotion.id))
    )
    return [records.Promotion.from_row(row) for row in rows.scalars()]


async def in_state(session: AsyncSession, state: PromotionState) -> list[records.Promotion]:
    rows = await session.execute(
        select(Promotion).where(col(Promotion.state) == state).order_by(col(Promotion.id))
    )
    return [records.Promotion.from_row(row) for row in rows.scalars()]


def blocking(promotions: list[records.Promotion]) -> records.Promotion | None:
    """The promotion that keeps a run from being promoted (again), rerun into or cancelled: one under
    way, or one that made it official."""
    return next((p for p in promotions if p.state in OPEN_STATES or p.state is PromotionState.PROMOTED), None)


async def add_approval(
    session: AsyncSession, promotion_id: int, approvers: list[str], seen: str, now: datetime
) -> bool:
    """Record the approvers as they are now, guarded on the list read before (`seen`): two clicks at
    once give one change, the other is told to look again."""
    won = await session.execute(
        update(Promotion)
        .where(
            col(Promotion.id) == promotion_id,
            col(Promotion.state) == PromotionState.PENDING,
            col(Promotion.approvers_json) == seen,
        )
        .values(approvers_json=json.dumps(approvers), updated_at=now)
        .returning(col(Promotion.id))
    )
    return won.first() is not None


async def move(
    session: AsyncSession,
    promotion_id: int,
    *,
    expected: PromotionState,
    to: PromotionState,
    now: datetime,
    **values: object,
) -> bool:
    """The guarded transition: True when this caller moved it from `expected`."""
    won = await session.execute(
        update(Promotion)
        .where(col(Promotion.id) == promotion_id, col(Promotion.state) == expected)
        .values(state=to, updated_at=now, **values)
        .returning(col(Promotion.id))
    )
    return won.first() is not None


async def take_lock(session: AsyncSession, promotion_id: int, now: datetime) -> bool:
    """Take `runs/official` for this promotion; False when another promotion holds it."""
    statement = (
        insert(session, PromotionLock)
        .values(scope=OFFICIAL_SCOPE, promotion_id=promotion_id, taken_at=now)
        .on_conflict_do_nothing(index_elements=["scope"])
        .returning(col(PromotionLock.scope))
    )
    taken = (await session.execute(statement)).first() is not None
    if taken:
        return True
    holder = await session.execute(
        select(col(PromotionLock.promotion_id)).where(col(PromotionLock.scope) == OFFICIAL_SCOPE)
    )
    return holder.scalar_one_or_none() == promotion_id  # already ours (a retried claim)


async def lock_holder(session: AsyncSession) -> int | None:
    rows = await session.execute(
        select(col(PromotionLock.promotion_id)).where(col(PromotionLock.scope) == OFFICIAL_SCOPE)
    )
    return rows.scalar_one_or_none()


async def claim(session: AsyncSession, promotion_id: int, now: datetime) -> bool:
    """APPROVED → EXECUTING with the lock taken, in one transaction; False (nothing changed) when the
    promotion was claimed already or another one holds `runs/official`."""
    if not await take_lock(session, promotion_id, now):
        return False
    if await move(
        session, promotion_id, expected=PromotionState.APPROVED, to=PromotionState.EXECUTING, now=now
    ):
        return True
    await release(session, promotion_id)
    return False


async def set_card_ts(session: AsyncSession, promotion_id: int, ts: str) -> None:
    await session.execute(update(Promotion).where(col(Promotion.id) == promotion_id).values(card_ts=ts))


async def set_plan(session: AsyncSession, promotion_id: int, plan_json: str) -> None:
    await session.execute(
        update(Promotion).where(col(Promotion.id) == promotion_id).values(plan_json=plan_json)
    )


async def journal(session: AsyncSession, promotion_id: int, entry: JournalEntry, now: datetime) -> bool:
    """Write a step's phase into the row, while it is EXECUTING: before a step (started) and after it."""
    row = await session.get(Promotion, promotion_id)
    if row is None or row.state is not PromotionState.EXECUTING:
        return False
    entries = [JournalEntry.model_validate(item) for item in json.loads(row.journal_json)]
    before = next((e for e in entries if e.step is entry.step and e.phase is Phase.STARTED), None)
    if entry.phase is Phase.STARTED:
        entry = entry.model_copy(update={"started_at": now, "ended_at": None})
    else:
        started = before.started_at if before is not None and before.started_at is not None else now
        runner = before.runner if before is not None else None
        entry = entry.model_copy(update={"started_at": started, "ended_at": now, "runner": runner})
    entries = [e for e in entries if e.step is not entry.step] + [entry]
    won = await session.execute(
        update(Promotion)
        .where(
            col(Promotion.id) == promotion_id,
            col(Promotion.state) == PromotionState.EXECUTING,
            col(Promotion.journal_json) == row.journal_json,
        )
        .values(
            step=entry.step.value,
            phase=entry.phase.value,
            journal_json=json.dumps([e.model_dump(mode="json") for e in entries]),
            updated_at=now,
        )
        .returning(col(Promotion.id))
    )
    return won.first() is not None


async def beat(session: AsyncSession, promotion_id: int, now: datetime) -> bool:
    """The executor's heartbeat while a step runs: a successor waits for a promotion whose heartbeat
    is fresh, since its executor may still be touching `runs/official`."""
    won = await session.execute(
        update(Promotion)
        .where(col(Promotion.id) == promotion_id, col(Promotion.state) == PromotionState.EXECUTING)
        .values(updated_at=now)
        .returning(col(Promotion.id))
    )
    return won.first() is not None


async def end(
    session: AsyncSession,
    promotion_id: int,
    to: PromotionState,
    now: datetime,
    *,
    error: str | None = None,
    after_restart: bool = False,
) -> bool:
    """EXECUTING → PROMOTED, UNDONE, LOST or VOID, and the lock given back, in one transaction."""
    assert to in _ENDED
    moved = await move(
        session,
        promotion_id,
        expected=PromotionState.EXECUTING,
        to=to,
        now=now,
        error=error,
        after_restart=after_restart,
    )
    if moved:
        await release(session, promotion_id)
    return moved


async def release(session: AsyncSession, promotion_id: int) -> None:
    await session.execute(
        delete(PromotionLock).where(
            col(PromotionLock.scope) == OFFICIAL_SCOPE, col(PromotionLock.promotion_id) == promotion_id
        )
    )


def entries(promotion: records.Promotion) -> tuple[JournalEntry, ...]:
    return tuple(JournalEntry.model_validate(item) for item in json.loads(promotion.journal_json))


def approvers(promotion: records.Promotion) -> list[str]:
    return [str(user) for user in json.loads(promotion.approvers_json)]


async def states_present(session: AsyncSession, states: tuple[PromotionState, ...]) -> set[PromotionState]:
    """Which of `states` some promotion is in now: one query, so the engine's tick asks the runner to
    look (and load whole promotions) only when there is something for it."""
    rows = await session.execute(
        select(col(Promotion.state)).where(col(Promotion.state).in_(states)).distinct()
    )
    return {PromotionState(state) for state in rows.scalars()}
