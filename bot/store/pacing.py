"""Slack's rate budgets, one for the whole deployment: whichever bot process sends, it claims the send
from the budget's row in the database, under that row's lock (`FOR UPDATE` on PostgreSQL; SQLite's
write transaction), so two processes, or a process and its successor at the timers, share one count.

A budget allows one send per target (a message, a channel) in any `interval` and, when `per_minute`
is set, that many sends in any minute over all targets. Its row keeps only what those rules still
need: each target's last send within the interval and the sends of the last minute.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.store.models import PaceBudget
from bot.store.upsert import insert

WINDOW = timedelta(minutes=1)


@dataclass(frozen=True)
class Budget:
    name: str  # the Web API method it paces
    interval: timedelta  # between two sends to one target
    per_minute: int | None = None  # sends in any minute, over all targets; None: no such cap


@dataclass
class Sends:
    """A budget's recent sends, pruned to what its rules still look at (pure; no I/O)."""

    last: dict[str, datetime] = field(default_factory=dict)
    recent: list[datetime] = field(default_factory=list)

    @classmethod
    def load(cls, text: str, budget: Budget, now: datetime) -> Sends:
        raw = json.loads(text or "{}")
        last = {target: datetime.fromisoformat(at) for target, at in raw.get("last", {}).items()}
        recent = sorted(datetime.fromisoformat(at) for at in raw.get("recent", []))
        return cls(
            {target: at for target, at in last.items() if now - at < budget.interval},
            [at for at in recent if now - at < WINDOW],
        )

    def dump(self) -> str:
        last = {target: at.isoformat() for target, at in self.last.items()}
        return json.dumps({"last": last, "recent": [at.isoformat() for at in self.recent]})

    def not_before(self, budget: Budget, target: str, now: datetime) -> datetime | None:
        """When a send to `target` may go; None when it may go now."""
        waits = []
        last = self.last.get(target)
        if last is not None and now - last < budget.interval:
            waits.append(last + budget.interval)
        recent = [at for at in self.recent if now - at < WINDOW]
        if budget.per_minute is not None and len(recent) >= budget.per_minute:
            waits.append(recent[-budget.per_minute] + WINDOW)
        return max(waits) if waits else None

    def add(self, target: str, at: datetime) -> None:
        self.last[target] = at
        self.recent = sorted([*self.recent, at])

    def remove(self, target: str, at: datetime) -> None:
        if self.last.get(target) == at:
            del self.last[target]
        if at in self.recent:
            self.recent.remove(at)


async def reserve(session: AsyncSession, budget: Budget, target: str, now: datetime) -> datetime | None:
    """Take one send to `target` from the budget, counted from `now`; None when taken, else when the
    budget allows it (nothing is taken then)."""
    sends = await _locked(session, budget, now)
    wait = sends.not_before(budget, target, now)
    if wait is None:
        sends.add(target, now)
        await _store(session, budget, sends)
    return wait


async def restamp(
    session: AsyncSession, budget: Budget, target: str, reserved: datetime, at: datetime
) -> None:
    """The send taken at `reserved` happened at `at` (when Slack answered): it counts from then."""
    sends = await _locked(session, budget, at)
    sends.remove(target, reserved)
    sends.add(target, at)
    await _store(session, budget, sends)


async def release(session: AsyncSession, budget: Budget, target: str, reserved: datetime) -> None:
    """The send taken at `reserved` did not happen: give it back."""
    sends = await _locked(session, budget, reserved)
    sends.remove(target, reserved)
    await _store(session, budget, sends)


async def _locked(session: AsyncSession, budget: Budget, now: datetime) -> Sends:
    """The budget's row, locked until the caller's transaction ends (made on first use)."""
    query = select(col(PaceBudget.state)).where(col(PaceBudget.name) == budget.name).with_for_update()
    text = (await session.execute(query)).scalar_one_or_none()
    if text is None:
        statement = insert(session, PaceBudget).values(name=budget.name, state="{}")
        await session.execute(statement.on_conflict_do_nothing(index_elements=["name"]))
        text = (await session.execute(query)).scalar_one()
    return Sends.load(text, budget, now)


async def _store(session: AsyncSession, budget: Budget, sends: Sends) -> None:
    await session.execute(
        update(PaceBudget).where(col(PaceBudget.name) == budget.name).values(state=sends.dump())
    )
