"""The target key of every message the bot sends: built here, and read back only by `parse`, its inverse.

A key names one message for good. The outbox keeps one pending row per key (a redraw asked for twice is
one edit), `exists` makes a milestone or a DM go once ever, and each post carries its key in Slack's
message `metadata`, so a post whose answer was lost is found in the conversation instead of sent again.
The strings are therefore a contract with rows already stored and messages already in Slack: a key
built here must never change its text.

A key is `<topic>:<part>:…:<part>`, with a fixed number of parts per topic; every part but the last is
non-empty and holds no `:`, the last one may (a timestamp, a nested key).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Topic(StrEnum):
    CARD = "card"  # a request's card: `card:<request>`
    STATUS = "status"  # a run's card redrawn: `status:<run>`
    SUMMARY = "summary"  # a run's paired report: `summary:<run>`
    NOTICE = "notice"  # a line in a run's thread: `notice:<run>:<what>:<when>`
    MILESTONE = "milestone"  # a milestone in a run's thread: `milestone:<run>:<which>`
    REMINDER = "remind"  # a pending request's reminder in its thread: `remind:<request>`
    DM = "dm"  # a direct message to the requester: `dm:<why>:<request>`
    HOME = "home"  # App Home tabs: `home:<user>`, or `home:*` for every viewer
    EPHEMERAL = "ephemeral"  # a reply one person sees: `ephemeral:<token>`
    PROMOTION = "promotion"  # a promotion's card: `promotion:<promotion>`


# How many parts follow each topic.
ARITY: dict[Topic, int] = {
    Topic.CARD: 1,
    Topic.STATUS: 1,
    Topic.SUMMARY: 1,
    Topic.NOTICE: 3,
    Topic.MILESTONE: 2,
    Topic.REMINDER: 1,
    Topic.DM: 2,
    Topic.HOME: 1,
    Topic.EPHEMERAL: 1,
    Topic.PROMOTION: 1,
}

STARTED = "started"  # the milestone that opens a run's thread
FINISHED = "finished"  # why the requester gets a DM
EVERY_VIEWER_ID = "*"


@dataclass(frozen=True)
class OutboxKey:
    topic: Topic
    parts: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.parts) != ARITY[self.topic]:
            raise ValueError(f"a {self.topic.value} key has {ARITY[self.topic]} parts, not {len(self.parts)}")
        if any(not part or ":" in part for part in self.parts[:-1]) or not self.parts[-1]:
            raise ValueError(f"parts of a key are non-empty, and only the last may hold ':' ({self.parts})")

    def __str__(self) -> str:
        return ":".join((self.topic.value, *self.parts))

    @property
    def subject(self) -> str:
        """The first part: whose message it is (a request, a run, a user) or why it is sent."""
        return self.parts[0]


def parse(key: str) -> OutboxKey:
    """The inverse of `str(OutboxKey)`; ValueError for a string no builder here makes."""
    topic, _, rest = key.partition(":")
    try:
        known = Topic(topic)
    except ValueError:
        raise ValueError(f"not an outbox key: {key!r}") from None
    return OutboxKey(known, tuple(rest.split(":", ARITY[known] - 1)))


def card(request_id: int) -> str:
    return str(OutboxKey(Topic.CARD, (str(request_id),)))


def status(run_id: int) -> str:
    return str(OutboxKey(Topic.STATUS, (str(run_id),)))


def summary(run_id: int) -> str:
    return str(OutboxKey(Topic.SUMMARY, (str(run_id),)))


def notice(run_id: int, what: str, at: datetime) -> str:
    """One line per event: `what` happened to the run at `at`."""
    return str(OutboxKey(Topic.NOTICE, (str(run_id), what, at.isoformat())))


def milestone(run_id: int, which: str) -> str:
    """`which` is `started`, a quarter (`50`) or a storm of infrastructure failures (`infra:2`)."""
    return str(OutboxKey(Topic.MILESTONE, (str(run_id), which)))


def reminder(request_id: int) -> str:
    return str(OutboxKey(Topic.REMINDER, (str(request_id),)))


def finished_dm(request_id: int) -> str:
    """The requester's DM when their run finished: sent once per run, ever."""
    return str(OutboxKey(Topic.DM, (FINISHED, str(request_id))))


def home(user_id: str) -> str:
    return str(OutboxKey(Topic.HOME, (user_id,)))


EVERY_VIEWER = home(EVERY_VIEWER_ID)  # every App Home tab the bot has been asked for


def ephemeral(token: str) -> str:
    """A reply one person sees; `token` makes it its own message (a fresh id, or the key it is about)."""
    return str(OutboxKey(Topic.EPHEMERAL, (token,)))


def promotion(promotion_id: int) -> str:
    return str(OutboxKey(Topic.PROMOTION, (str(promotion_id),)))


def promotion_id(key: str) -> int:
    """The promotion whose card `key` draws."""
    parsed = parse(key)
    if parsed.topic is not Topic.PROMOTION:
        raise ValueError(f"not a promotion card's key: {key!r}")
    return int(parsed.subject)


def is_start(key: str) -> bool:
    """Whether `key` is a run's "started" milestone, which opens its thread."""
    parsed = _parsed(key)
    return parsed is not None and parsed.topic is Topic.MILESTONE and parsed.parts[1] == STARTED


def is_finished_dm(key: str) -> bool:
    parsed = _parsed(key)
    return parsed is not None and parsed.topic is Topic.DM and parsed.subject == FINISHED


def home_user(key: str) -> str | None:
    """The user whose App Home tab `key` republishes; None for every viewer."""
    parsed = parse(key)
    if parsed.topic is not Topic.HOME:
        raise ValueError(f"not an App Home key: {key!r}")
    return None if parsed.subject == EVERY_VIEWER_ID else parsed.subject


def _parsed(key: str) -> OutboxKey | None:
    """For questions about a key that any stored string may be asked: no key, no."""
    try:
        return parse(key)
    except ValueError:
        return None


# Topics whose keys `outbox.exists` asks about (a milestone, a run's report, a DM go once ever): their
# rows are the only memory that the message went, so pruning old sent rows keeps them.
ONCE_EVER = (Topic.MILESTONE, Topic.SUMMARY, Topic.DM)


def topic_prefix(topic: Topic) -> str:
    """What every key of `topic` starts with, for a query that picks rows by topic (`LIKE 'x:%'`)."""
    return f"{topic.value}:"
