"""What a test reads back from the bot's database, through the store, so it reads the same on SQLite
and on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select

from bot.store import audit
from bot.store.db import Store
from bot.store.models import Run, RunRequest


async def audit_actions(store: Store, request_id: int = 1) -> list[str]:
    async with store.read() as session:
        return [event.action for event in await audit.events_for(session, request_id)]


async def all_runs(store: Store) -> list[Run]:
    async with store.read() as session:
        return list((await session.execute(select(Run).order_by(Run.id))).scalars())


async def request_count(store: Store) -> int:
    async with store.read() as session:
        return int((await session.execute(select(func.count()).select_from(RunRequest))).scalar_one())


async def all_requests(store: Store) -> list[RunRequest]:
    async with store.read() as session:
        return list((await session.execute(select(RunRequest).order_by(RunRequest.id))).scalars())
