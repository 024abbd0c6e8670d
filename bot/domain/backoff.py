"""Capped exponential backoff, the one rule for every retry the bot waits out: a lane's infrastructure
failure (the engine) and a Slack call that failed (the notifier). Each passes its own base and cap."""

from __future__ import annotations

from datetime import timedelta


def backoff(failures: int, *, base: float, cap: float) -> timedelta:
    """The wait before retry number `failures` (1 for the first): base, 2×base, 4×base … never past cap."""
    return timedelta(seconds=min(cap, base * 2 ** max(0, failures - 1)))
