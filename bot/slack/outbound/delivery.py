"""The rules of delivery that need no I/O: which conversation a row belongs to, and what a failed call
means for it.

Rows of one conversation go in order; conversations go side by side, so a slow call holds up only its
own. A failed call is one of three things: an outage (HTTP 5xx, 429, network errors, timeouts, and
Slack's own words for "not now"), retried until Slack is back however long that takes; a malformed
answer (not a Web API answer, or a post without its `ts`), retried up to `max_attempts`; or a refusal
(any other `ok: false` error: invalid_blocks, msg_too_long, channel_not_found, not_in_channel, …),
which no retry fixes, so the row is set aside at once. Anything else raised while rendering or
sending is a row that cannot be rendered: set aside too.
"""

from __future__ import annotations

from enum import StrEnum

import aiohttp
from slack_sdk.errors import SlackApiError

from bot.slack.outbound.webclient import MalformedAnswer
from bot.store import outbox
from bot.store.records import OutboxItem, OutboxKind

# Slack's words for "not now", answered with HTTP 200.
TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)


class Verdict(StrEnum):
    OUTAGE = "outage"  # retried until Slack answers
    MALFORMED = "malformed"  # retried up to max_attempts, then set aside
    REFUSED = "refused"  # set aside with Slack's error
    UNRENDERABLE = "unrenderable"  # set aside with the exception


def verdict(exc: Exception) -> tuple[Verdict, str]:
    """What a failure while sending means for the row, and the error to record (never a secret: Slack's
    error code, or an exception's type and message)."""
    if isinstance(exc, SlackApiError):
        error, status = slack_error(exc)
        if error in TRANSIENT_ERRORS or status >= 500 or status == 429:
            return Verdict.OUTAGE, error
        return Verdict.REFUSED, error
    if isinstance(exc, MalformedAnswer):
        return Verdict.MALFORMED, str(exc)
    if isinstance(exc, aiohttp.ClientError | TimeoutError):
        return Verdict.OUTAGE, f"{type(exc).__name__}: {exc}".rstrip(": ")
    return Verdict.UNRENDERABLE, f"cannot render: {type(exc).__name__}: {exc}"[:500]


def slack_error(exc: SlackApiError) -> tuple[str, int]:
    data = exc.response.data
    error = data.get("error") if isinstance(data, dict) else None
    return str(error or "unknown_error"), exc.response.status_code


def retry_after(exc: Exception) -> float | None:
    """Slack's `Retry-After` on a 429, in seconds."""
    if not isinstance(exc, SlackApiError):
        return None
    headers = getattr(exc.response, "headers", None) or {}
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if isinstance(value, list):
        value = value[0] if value else None
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def conversation_of(item: OutboxItem, channels: dict[int, str]) -> str:
    """The conversation a row belongs to, given the channel of each request by id.

    A channel's cards and threads (and the DMs that follow its reports) are one conversation; a reply
    in a card's channel is its person's; the replies to one `response_url` (one command's, such as a
    dry run's plan in several parts) are one, in order; App Home is one.
    """
    if item.kind is OutboxKind.HOME:
        return "home"
    if item.kind in (OutboxKind.EPHEMERAL, OutboxKind.CARD_COPY, OutboxKind.COVERAGE):
        if item.response_url is not None:
            return f"reply:{item.response_url}"
        if item.user_id is not None:
            return f"user:{item.user_id}"
        return f"row:{item.id}"
    thread = outbox.thread_of(item)
    if thread is None:
        return f"row:{item.id}"
    return f"channel:{channels[thread]}" if thread in channels else f"request:{thread}"
