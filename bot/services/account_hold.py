"""Why an account takes no new lane now: the one rule the engine's claim applies and `/csb accounts` shows
(drained, resting after a rate limit, token expired, not ready by CSB, or too busy by CSB's usage cache)."""

from __future__ import annotations

from datetime import datetime

from bot.csb.account_homes import account_name, usable
from bot.csb.usage_cache import AccountUsage, UsageCache
from bot.domain.events import AccountHeld
from bot.store.records import Account


def over_utilization(usage: AccountUsage, limit: float) -> bool:
    """Whether a new lane should avoid the account: a known 5-hour or 7-day utilisation at or above
    `limit` percent. Unknown (no cache, a stale or broken one, no entry) never holds an account back."""
    highest = usage.highest()
    return highest is not None and limit < 100 and highest >= limit


def utilization_detail(usage: AccountUsage) -> str:
    """`97.0% 5-hour, 40.0% 7-day`: what made an account too busy, for the thread note."""
    parts = [
        f"{window.utilization:.1f}% {label}"
        for window, label in ((usage.five_hour, "5-hour"), (usage.seven_day, "7-day"))
        if window is not None
    ]
    return ", ".join(parts)


def why_held(
    account: Account,
    now: datetime,
    *,
    fallback: bool,
    ready: frozenset[str] | None,
    usage: UsageCache | None,
    limit: float,
) -> AccountHeld | None:
    """Why this account takes no new lane now, or None when it may take one (the claim's own rule)."""
    name = account_name(account.home)
    if account.drained_at is not None:
        return AccountHeld(name=name, why="drained", detail=account.drained_by)
    if account.rested_until is not None and account.rested_until > now:
        return AccountHeld(name=name, why="resting", detail=account.rest_reason)
    if not usable(account.home, now, fallback=fallback):
        return AccountHeld(name=name, why="expired")
    if ready is not None and account.home not in ready:
        return AccountHeld(name=name, why="not_ready")
    figures = usage.usage(name) if usage is not None else None
    if figures is not None and over_utilization(figures, limit):
        return AccountHeld(name=name, why="utilisation", detail=utilization_detail(figures))
    return None
