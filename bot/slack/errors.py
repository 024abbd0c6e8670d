"""The one place exceptions become words for Slack. Unexpected errors get a correlation id, never details.

`answering` is the error boundary of every command and click: whatever the work raises is answered with
`describe`'s words instead of escaping the listener.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.domain.command_line import is_usage
from bot.domain.errors import CsbBotError, InfraError, PolicyError, UserInputError
from bot.domain.mrkdwn import escape
from bot.store.availability import Outage, outage, unavailable

log = logging.getLogger(__name__)

# A lock held by other work (or every pooled connection in use) clears in a moment; a database that
# cannot be reached (refused, restarting, cut off) takes longer, and saying so spares a person retrying.
BUSY = ":hourglass: Database busy, try again in a moment."
AWAY = ":hourglass: Database unavailable, try again in a minute."
# A slash command's ack while the bot cannot reach Slack's Web API: the work is kept in the outbox.
SLACK_AWAY = (
    ":hourglass: Received. The bot cannot reach Slack's Web API right now; its answer follows when it can."
)


def outage_line(exc: BaseException) -> str | None:
    """The one line for a database that is busy (BUSY) or away (AWAY); None for any other error."""
    kind = outage(exc)
    if kind is None:
        return None
    log.warning("database %s: %s", "busy" if kind is Outage.BUSY else "unavailable", exc)
    return BUSY if kind is Outage.BUSY else AWAY


def describe(exc: BaseException) -> str:
    """A reply for the person who triggered `exc`; logs what they must not see."""
    if isinstance(exc, UserInputError):
        # It may echo what was typed: escaped, so `<!channel>` in a bad flag mentions no one.
        message = escape(exc.message)
        return f"{message}\n{_usage(escape(exc.hint))}" if exc.hint else message
    if isinstance(exc, PolicyError):
        return f":no_entry: {exc}"
    line = outage_line(exc)
    if line is not None:
        return line
    if isinstance(exc, InfraError):
        ref = _ref()
        log.error("infrastructure error ref=%s: %s", ref, exc)
        return f":warning: {exc} (ref `{ref}`)"
    ref = _ref()
    log.error("unexpected error ref=%s", ref, exc_info=exc)
    kind = "bot error" if isinstance(exc, CsbBotError) else "unexpected error"
    return (
        f":warning: Something went wrong on our side ({kind}, ref `{ref}`). "
        "An operator can find it in the bot's log."
    )


Reply = Callable[[str], Awaitable[None]]


async def answering(
    work: Callable[[], Awaitable[str | None]],
    reply: Reply,
    *,
    words: Callable[[Exception], str] = describe,
    when_busy: Reply | None = None,
) -> None:
    """Run `work` and send its answer (if any) with `reply`; if it raises, send the words for the error.

    A person's mistake says what was wrong, an unexpected error a short correlation id with its traceback
    in the log (`describe`, or `words` when the caller adds to it). `when_busy`, when given, answers an
    unavailable database: the usual reply may go through that database.
    """
    try:
        answer = await work()
    except Exception as exc:
        answer = words(exc)
        if when_busy is not None and unavailable(exc):
            await when_busy(answer)
            return
    if answer:
        await reply(answer)


T = TypeVar("T")


async def unless_busy(work: Callable[[], Awaitable[T]], when_busy: Callable[[str], Awaitable[T]]) -> T:
    """`work`'s result, or `when_busy`'s given the line to show when the database is locked or away;
    other errors go on up.

    For answers that must not go through the database, as a modal's submit needs (no response_url).
    """
    try:
        return await work()
    except Exception as exc:
        line = outage_line(exc)
        if line is None:
            raise
        return await when_busy(line)


def _usage(hint: str) -> str:
    """A command line is shown as the usage; any other hint (how to fix it) as it is."""
    return f"Usage: `{hint}`" if is_usage(hint) else hint


def _ref() -> str:
    return secrets.token_hex(4)
