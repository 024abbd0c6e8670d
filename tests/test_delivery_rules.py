"""What a failed Slack call means for its outbox row, and which rows may go side by side: pure rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest
from slack_sdk.errors import SlackApiError, SlackObjectFormationError
from slack_sdk.web.slack_response import SlackResponse

from bot.slack.outbound.delivery import Verdict, conversation_of, retry_after, verdict
from bot.slack.outbound.webclient import MalformedAnswer
from bot.store.models import OutboxItem, OutboxKind

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def answer(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> SlackApiError:
    response = SlackResponse(
        client=None,
        http_verb="POST",
        api_url="https://slack.example/api/chat.postMessage",
        req_args={},
        data=data,
        headers=headers or {},
        status_code=status,
    )
    return SlackApiError("The request to the Slack API failed.", response)


@pytest.mark.parametrize(
    "error",
    [
        "invalid_blocks",
        "msg_too_long",
        "invalid_arguments",
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "no_such_error_yet",
    ],
)
def test_any_error_slack_gives_with_ok_false_is_a_refusal(error: str) -> None:
    assert verdict(answer({"ok": False, "error": error})) == (Verdict.REFUSED, error)


@pytest.mark.parametrize(
    ("exc", "found"),
    [
        (answer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "7"}), Verdict.OUTAGE),
        (answer({"ok": False, "error": "internal_error"}), Verdict.OUTAGE),
        (answer({"ok": False, "error": "invalid_blocks"}, 503), Verdict.OUTAGE),
        (aiohttp.ServerDisconnectedError(), Verdict.OUTAGE),
        (TimeoutError(), Verdict.OUTAGE),
        (MalformedAnswer("chat.postMessage answered a body that is not JSON"), Verdict.MALFORMED),
        (SlackObjectFormationError("text attribute cannot exceed 3000 characters"), Verdict.UNRENDERABLE),
        (ValueError("a spec that does not parse"), Verdict.UNRENDERABLE),
    ],
)
def test_outages_are_retried_malformed_answers_counted_and_render_errors_set_aside(
    exc: Exception, found: Verdict
) -> None:
    assert verdict(exc)[0] is found


def test_the_recorded_error_names_the_exception_and_the_wait_slack_asked_for() -> None:
    assert verdict(KeyError("ts"))[1] == "cannot render: KeyError: 'ts'"
    assert verdict(TimeoutError())[1] == "TimeoutError"
    assert retry_after(answer({"ok": False, "error": "ratelimited"}, 429, {"Retry-After": "7"})) == 7.0
    assert retry_after(TimeoutError()) is None


def row(kind: OutboxKind, **fields: Any) -> OutboxItem:
    return OutboxItem(
        id=fields.pop("id", 1), target="t", kind=kind, next_attempt_at=NOW, created_at=NOW, **fields
    )


def test_a_channel_is_one_conversation_and_replies_do_not_wait_for_it() -> None:
    channels = {1: "C1", 2: "C1", 3: "C2"}
    card_1 = conversation_of(row(OutboxKind.CARD, request_id=1), channels)
    notice_2 = conversation_of(row(OutboxKind.NOTICE, run_id=2), channels)
    report_3 = conversation_of(row(OutboxKind.SUMMARY, run_id=3), channels)
    assert card_1 == notice_2 == "channel:C1" and report_3 == "channel:C2"
    reply_a = conversation_of(row(OutboxKind.EPHEMERAL, id=8, request_id=1, response_url="u"), channels)
    reply_b = conversation_of(row(OutboxKind.EPHEMERAL, id=9, request_id=1, response_url="v"), channels)
    in_card = conversation_of(row(OutboxKind.EPHEMERAL, request_id=1, user_id="U1"), channels)
    assert len({reply_a, reply_b, in_card, card_1}) == 4 and in_card == "user:U1"
    part_2 = conversation_of(row(OutboxKind.EPHEMERAL, id=10, request_id=1, response_url="u"), channels)
    assert part_2 == reply_a  # one command's reply in parts: in order, one after the other
    assert conversation_of(row(OutboxKind.HOME), channels) == "home"
