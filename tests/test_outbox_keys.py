"""Outbox keys: the idempotency contract carried in each message's metadata. Every key a builder makes
parses back to what it was built from, the text of each kind of key is pinned (rows already stored and
messages already in Slack carry it), and the questions the notifier asks of a key read it by parsing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.domain import outbox_keys
from bot.domain.outbox_keys import ARITY, OutboxKey, Topic, parse

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

inner_part = st.text(min_size=1).filter(lambda part: ":" not in part)
last_part = st.text(min_size=1)


@st.composite
def keys(draw: st.DrawFn) -> OutboxKey:
    topic = draw(st.sampled_from(list(Topic)))
    inner = draw(st.lists(inner_part, min_size=ARITY[topic] - 1, max_size=ARITY[topic] - 1))
    return OutboxKey(topic, (*inner, draw(last_part)))


@given(keys())
def test_every_key_parses_back_to_itself(key: OutboxKey) -> None:
    assert parse(str(key)) == key
    assert str(parse(str(key))) == str(key)


ids = st.integers(min_value=1, max_value=2**53)


@given(ids, st.sampled_from(["paused", "voided", "cancel"]), st.datetimes(timezones=st.just(UTC)))
def test_the_builders_round_trip(number: int, what: str, at: datetime) -> None:
    built = {
        outbox_keys.card(number): (Topic.CARD, (str(number),)),
        outbox_keys.status(number): (Topic.STATUS, (str(number),)),
        outbox_keys.summary(number): (Topic.SUMMARY, (str(number),)),
        outbox_keys.notice(number, what, at): (Topic.NOTICE, (str(number), what, at.isoformat())),
        outbox_keys.milestone(number, "infra:3"): (Topic.MILESTONE, (str(number), "infra:3")),
        outbox_keys.reminder(number): (Topic.REMINDER, (str(number),)),
        outbox_keys.finished_dm(number): (Topic.DM, ("finished", str(number))),
        outbox_keys.home(f"U{number}"): (Topic.HOME, (f"U{number}",)),
        outbox_keys.ephemeral(outbox_keys.card(number)): (Topic.EPHEMERAL, (f"card:{number}",)),
    }
    for text, (topic, parts) in built.items():
        assert parse(text) == OutboxKey(topic, parts)


def test_the_text_of_each_kind_of_key_never_changes() -> None:
    assert [
        outbox_keys.card(7),
        outbox_keys.status(7),
        outbox_keys.summary(7),
        outbox_keys.notice(7, "paused", AT),
        outbox_keys.milestone(7, outbox_keys.STARTED),
        outbox_keys.milestone(7, "50"),
        outbox_keys.milestone(7, "infra:2"),
        outbox_keys.reminder(7),
        outbox_keys.finished_dm(7),
        outbox_keys.home("U0ALICE"),
        outbox_keys.EVERY_VIEWER,
        outbox_keys.ephemeral(f"{outbox_keys.card(7)}:not_in_channel"),
    ] == [
        "card:7",
        "status:7",
        "summary:7",
        "notice:7:paused:2026-01-02T03:04:05+00:00",
        "milestone:7:started",
        "milestone:7:50",
        "milestone:7:infra:2",
        "remind:7",
        "dm:finished:7",
        "home:U0ALICE",
        "home:*",
        "ephemeral:card:7:not_in_channel",
    ]


def test_what_the_notifier_asks_of_a_key() -> None:
    assert outbox_keys.is_start("milestone:7:started")
    assert not outbox_keys.is_start("milestone:7:50")
    assert not outbox_keys.is_start("notice:7:started:2026-01-02T03:04:05+00:00")
    assert not outbox_keys.is_start("anything else")  # any stored string may be asked
    assert outbox_keys.is_finished_dm("dm:finished:7") and not outbox_keys.is_finished_dm("ephemeral:x")
    assert outbox_keys.home_user("home:U0ALICE") == "U0ALICE"
    assert outbox_keys.home_user(outbox_keys.EVERY_VIEWER) is None


@pytest.mark.parametrize(
    "text", ["", "card", "card:", "cards:7", "notice:7:paused", "dm:finished", "milestone::started", "home:"]
)
def test_a_string_no_builder_makes_is_no_key(text: str) -> None:
    with pytest.raises(ValueError):
        parse(text)
