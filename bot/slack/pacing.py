"""How often the bot may edit a message: one `chat.update` per card per interval, within one budget.

`chat.update` is tier 3 (about 50 a minute per workspace), so a 264-task run finishing lanes every
second must not edit its card every second. The outbox coalesces (one pending row per message); this
decides when that row may go, reading the injected clock.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta


class UpdatePacer:
    def __init__(self, interval: timedelta, per_minute: int, post_interval: timedelta) -> None:
        self._interval = interval
        self._per_minute = per_minute
        self._post_interval = post_interval
        self._last: dict[str, datetime] = {}
        self._recent: deque[datetime] = deque()
        self._last_post: dict[str, datetime] = {}

    def post_not_before(self, channel: str, now: datetime) -> datetime | None:
        """chat.postMessage: about one per second per channel, as Slack asks."""
        last = self._last_post.get(channel)
        if last is not None and now - last < self._post_interval:
            return last + self._post_interval
        return None

    def posted(self, channel: str, now: datetime) -> None:
        self._last_post[channel] = now

    def not_before(self, message: str, now: datetime) -> datetime | None:
        """When an update of `message` may be sent; None when it may go now."""
        while self._recent and now - self._recent[0] >= timedelta(minutes=1):
            self._recent.popleft()
        waits = []
        last = self._last.get(message)
        if last is not None and now - last < self._interval:
            waits.append(last + self._interval)
        if len(self._recent) >= self._per_minute:
            waits.append(self._recent[0] + timedelta(minutes=1))
        return max(waits) if waits else None

    def sent(self, message: str, now: datetime) -> None:
        self._last[message] = now
        self._recent.append(now)


class Wait(Exception):
    """Not now, and not a failure: a thread parent not posted yet, or an edit paced for later.

    Without `until`, the row waits with backoff: what it waits for may take long, or never come.
    """

    def __init__(self, until: datetime | None, why: str) -> None:
        super().__init__(why)
        self.until = until
