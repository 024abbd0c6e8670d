"""The error boundary of commands and clicks (`answering`): the work's answer, or the words for what it
raised, goes to the person; an unexpected error says only a short ref, and the log holds its traceback
under the same ref."""

from __future__ import annotations

import logging
import re

import pytest
from sqlalchemy.exc import OperationalError

from bot.domain.errors import PolicyError, UserInputError
from bot.slack.errors import AWAY, BUSY, answering


class Replies:
    def __init__(self) -> None:
        self.sent: list[str] = []
        self.busy: list[str] = []

    async def reply(self, text: str) -> None:
        self.sent.append(text)

    async def when_busy(self, text: str) -> None:
        self.busy.append(text)


def raising(exc: Exception):  # type: ignore[no-untyped-def]
    async def work() -> str | None:
        raise exc

    return work


async def test_the_answer_goes_out_and_no_answer_sends_nothing() -> None:
    replies = Replies()

    async def answer() -> str | None:
        return "done"

    async def silent() -> None:
        return None

    await answering(answer, replies.reply)
    await answering(silent, replies.reply)
    assert replies.sent == ["done"]


async def test_a_persons_mistake_says_what_was_wrong() -> None:
    replies = Replies()
    await answering(raising(UserInputError("no suite `x`", hint="/csb run SUITE")), replies.reply)
    await answering(raising(PolicyError("only approvers may approve")), replies.reply)
    assert replies.sent == [
        "no suite `x`\nUsage: `/csb run SUITE`",
        ":no_entry: only approvers may approve",
    ]


async def test_an_unexpected_error_says_a_ref_and_logs_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    replies = Replies()
    with caplog.at_level(logging.ERROR, logger="bot.slack.errors"):
        await answering(raising(RuntimeError("token xoxb-secret leaked into a message")), replies.reply)
    (text,) = replies.sent
    assert "xoxb" not in text and "RuntimeError" not in text
    ref = re.search(r"ref `([0-9a-f]{8})`", text)
    assert ref is not None, text
    (record,) = [r for r in caplog.records if ref.group(1) in r.getMessage()]
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


async def test_a_database_away_or_locked_is_answered_on_the_busy_path_with_its_own_line() -> None:
    """Away (unreachable): "try again in a minute"; locked past the wait: "busy, try again in a moment"."""
    replies = Replies()
    away = ConnectionError("database unreachable")
    locked = OperationalError("delete", {}, Exception("database is locked"))
    await answering(raising(away), replies.reply, when_busy=replies.when_busy)
    await answering(raising(locked), replies.reply, when_busy=replies.when_busy)
    assert replies.busy == [AWAY, BUSY] and replies.sent == []
    await answering(raising(away), replies.reply)  # no busy path given: the usual reply
    assert replies.sent == [AWAY]
    assert "unavailable, try again in a minute" in AWAY and "busy" in BUSY and "in a moment" in BUSY


async def test_the_caller_may_add_to_the_words() -> None:
    replies = Replies()
    await answering(
        raising(KeyError("x")), replies.reply, words=lambda exc: f"words for {type(exc).__name__}"
    )
    assert replies.sent == ["words for KeyError"]
