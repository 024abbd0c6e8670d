"""The one backoff rule: doubling from the base, never past the cap, the first retry waiting the base."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.backoff import backoff


def test_each_retry_waits_twice_the_last_until_the_cap() -> None:
    waits = [backoff(failures, base=10, cap=40) for failures in range(1, 6)]
    assert waits == [timedelta(seconds=s) for s in (10, 20, 40, 40, 40)]


def test_the_notifiers_delivery_retries_and_a_count_of_zero() -> None:
    assert [backoff(n, base=1.0, cap=60).total_seconds() for n in (1, 2, 3, 7, 8)] == [1, 2, 4, 60, 60]
    assert backoff(0, base=5, cap=60) == timedelta(seconds=5)  # never less than the base
