"""Claude account homes: taken round robin by lanes, rested for a while after a rate limit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store import records
from bot.store.models import Account, AccountEvent
from bot.store.narrow import rowcount, table_of
from bot.store.upsert import insert


async def ensure_accounts(session: AsyncSession, homes: Sequence[str]) -> None:
    """Add rows for homes seen for the first time; rows of homes that went away are left alone."""
    if not homes:
        return
    rows = [{"home": home, "turn": 0} for home in dict.fromkeys(homes)]
    statement = insert(session, Account).values(rows)
    await session.execute(statement.on_conflict_do_nothing(index_elements=["home"]))


async def ready_accounts(session: AsyncSession, homes: Sequence[str], now: datetime) -> list[records.Account]:
    """The configured homes not resting and not drained, next in turn first."""
    rows = await session.execute(
        select(Account)
        .where(
            col(Account.home).in_(list(homes)),
            or_(col(Account.rested_until).is_(None), col(Account.rested_until) <= now),
            col(Account.drained_at).is_(None),
        )
        .order_by(col(Account.turn), col(Account.home))
    )
    return [records.Account.from_row(account) for account in rows.scalars()]


async def set_turns(session: AsyncSession, turns: dict[str, int]) -> None:
    """Each home's next turn, in one statement run once per home (built once, prepared once)."""
    if turns:
        rows = [{"b_home": home, "b_turn": turn} for home, turn in turns.items()]
        await session.execute(_SET_TURN, rows)


_SET_TURN = (
    update(table_of(Account))
    .where(table_of(Account).c.home == bindparam("b_home"))
    .values(turn=bindparam("b_turn"))
)


async def rest(session: AsyncSession, home: str, until: datetime, reason: str) -> bool:
    """Rest an account until `until`; a longer rest already in place is kept."""
    result = await session.execute(
        update(Account)
        .where(
            col(Account.home) == home,
            or_(col(Account.rested_until).is_(None), col(Account.rested_until) < until),
        )
        .values(rested_until=until, rest_reason=reason)
    )
    return rowcount(result) == 1


async def all_accounts(session: AsyncSession) -> list[records.Account]:
    rows = await session.execute(select(Account).order_by(col(Account.home)))
    return [records.Account.from_row(account) for account in rows.scalars()]


async def drain(session: AsyncSession, home: str, actor: str, now: datetime) -> bool:
    """No new lane starts on the account from the next claim, on every replica; False if already drained."""
    result = await session.execute(
        update(Account)
        .where(col(Account.home) == home, col(Account.drained_at).is_(None))
        .values(drained_at=now, drained_by=actor)
        .returning(col(Account.home))
    )
    return result.scalar_one_or_none() is not None


async def undrain(session: AsyncSession, home: str) -> bool:
    """The account takes new lanes again; False if it was not drained."""
    result = await session.execute(
        update(Account)
        .where(col(Account.home) == home, col(Account.drained_at).is_not(None))
        .values(drained_at=None, drained_by=None)
        .returning(col(Account.home))
    )
    return result.scalar_one_or_none() is not None


async def record_event(
    session: AsyncSession, home: str, action: str, actor: str, at: datetime, detail: str | None = None
) -> None:
    """The account's audit trail (append-only): drained, undrained, lanes stopped."""
    session.add(AccountEvent(home=home, action=action, actor=actor, at=at, detail=detail))


async def last_events(session: AsyncSession, limit: int = 20) -> list[records.AccountEvent]:
    rows = await session.execute(select(AccountEvent).order_by(col(AccountEvent.id).desc()).limit(limit))
    return [records.AccountEvent.from_row(event) for event in rows.scalars()]
