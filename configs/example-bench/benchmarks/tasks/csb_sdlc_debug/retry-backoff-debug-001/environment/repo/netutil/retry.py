"""Retry flaky network calls with capped exponential backoff."""

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def backoff_delays(attempts: int, base: float, cap: float) -> list[float]:
    """Seconds to wait after each failed try: base, 2*base, 4*base, ... never more than cap."""
    return [base * 2 * i for i in range(attempts)]


def call_with_retry(
    fn: Callable[[], T], attempts: int, base: float, cap: float, sleep: Callable[[float], None]
) -> T:
    """Call ``fn`` up to ``attempts`` times, sleeping between tries on ConnectionError."""
    delays = backoff_delays(attempts, base, cap)
    for attempt in range(attempts):
        try:
            return fn()
        except ConnectionError:
            if attempt == attempts - 1:
                raise
            sleep(delays[attempt])
    raise ValueError("attempts must be at least 1")
