"""What the stand-in remembers about its traffic: every call, and the failures queued for the next ones."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
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


# What an injected failure answers: a Web API error (`{"ok": false, "error": …}`), an HTML or a plain-text
# page instead of JSON (a proxy in the way), a success whose `ts` is missing, or the JSON answer cut off
# halfway (a connection dropped mid-body: typed as JSON, unreadable as JSON).
ANSWERS = ("error", "html", "text", "no_ts", "truncated")


@dataclass(frozen=True, slots=True)
class InjectedFailure:
    """An answer to give instead of (or, with `after_store`, after) doing the work."""

    status: int
    retry_after: int
    after_store: bool
    refusal: str | None = None  # with status 200: Slack's `error`, e.g. "invalid_blocks"
    answer: str = "error"
    channel: str | None = None  # only calls to this channel take it

    @property
    def error(self) -> str:
        if self.refusal is not None:
            return self.refusal
        if self.answer in ("html", "text", "truncated"):
            return "not_json"
        return "ratelimited" if self.status == RATE_LIMITED else SERVER_ERRORS.get(self.status, "fatal_error")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)} if self.status == RATE_LIMITED else {}

    def matches(self, channel: object) -> bool:
        return self.channel is None or self.channel == channel


class FailurePlan:
    """Failures queued per method, consumed one per call in the order they were injected."""

    def __init__(self) -> None:
        self._queued: dict[str, deque[InjectedFailure]] = {}

    def add(self, method: str, failure: InjectedFailure, count: int) -> None:
        if failure.answer not in ANSWERS:
            raise ValueError(f"answer must be one of {ANSWERS}, got {failure.answer!r}")
        answered = failure.status == 200 and (failure.refusal is not None or failure.answer != "error")
        if not answered and failure.status != RATE_LIMITED and failure.status not in SERVER_ERRORS:
            raise ValueError(
                f"status must be 429, one of {sorted(SERVER_ERRORS)}, or 200 with a refusal or an answer, "
                f"got {failure.status}"
            )
        if failure.after_store and failure.status == RATE_LIMITED:
            raise ValueError("after_store only makes sense for a 5xx: a 429 means Slack did nothing")
        self._queued.setdefault(method, deque()).extend([failure] * count)

    def take(self, method: str, channel: object = None) -> InjectedFailure | None:
        """The first failure queued for `method` that applies to a call to `channel`."""
        queue = self._queued.get(method)
        for failure in queue or ():
            if failure.matches(channel):
                queue.remove(failure)  # type: ignore[union-attr]
                return failure
        return None

    def clear(self) -> None:
        self._queued.clear()


@dataclass(frozen=True, slots=True)
class Hold:
    """Calls that wait until the test lets them go: Slack taking its time, or hanging."""

    method: str
    channel: str | None
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # a held call is waiting
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        self.released.set()


class HoldPlan:
    def __init__(self) -> None:
        self._holds: list[Hold] = []

    def add(self, hold: Hold, count: int) -> None:
        self._holds.extend([hold] * count)

    def take(self, method: str, channel: object) -> Hold | None:
        for hold in self._holds:
            if hold.method == method and hold.channel in (None, channel):
                self._holds.remove(hold)
                return hold
        return None
