"""Tables and the queries that change them; each module is one kind of row, each function one change."""

from bot.store import (
    accounts,
    approvals,
    audit,
    homes,
    interactions,
    lanes,
    lease,
    orphans,
    outbox,
    promotions,
    queue,
    records,
    requests,
    runs,
)
from bot.store.db import Store

__all__ = [
    "Store",
    "accounts",
    "approvals",
    "audit",
    "homes",
    "interactions",
    "lanes",
    "lease",
    "orphans",
    "outbox",
    "promotions",
    "queue",
    "records",
    "requests",
    "runs",
]
