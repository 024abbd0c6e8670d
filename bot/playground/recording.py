"""What the stand-in remembers about its traffic: every call, and the failures queued for the next ones."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

RATE_LIMITED = 429
SERVER_ERRORS = {500: "internal_error", 502: "bad_gateway", 503: "service_unavailable", 504: "timeout"}


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One Web API call (or response_url post, method "response_url") as the bot made it."""

    method: str
    args: dict[str, Any]
    ok: bool
    error: str | None
    at: float


@dataclass(frozen=True, slots=True)
class InjectedFailure:
    """An answer to give instead of (or, with `after_store`, after) doing the work."""

    status: int
    retry_after: int
    after_store: bool

    @property
    def error(self) -> str:
        return "ratelimited" if self.status == RATE_LIMITED else SERVER_ERRORS.get(self.status, "fatal_error")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.status == RATE_LIMITED else {}


class FailurePlan:
    """Failures queued per method, consumed one per call in the order they were injected."""

    def __init__(self) -> None:
        self._queued: dict[str, deque[InjectedFailure]] = {}

    def add(self, method: str, failure: InjectedFailure, count: int) -> None:
        if failure.status != RATE_LIMITED and failure.status not in SERVER_ERRORS:
            raise ValueError(f"status must be 429 or one of {sorted(SERVER_ERRORS)}, got {failure.status}")
        if failure.after_store and failure.status == RATE_LIMITED:
            raise ValueError("after_store only makes sense for a 5xx: a 429 means Slack did nothing")
        self._queued.setdefault(method, deque()).extend([failure] * count)

    def take(self, method: str) -> InjectedFailure | None:
        queue = self._queued.get(method)
        return queue.popleft() if queue else None

    def clear(self) -> None:
        self._queued.clear()
