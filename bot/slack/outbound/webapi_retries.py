"""The Web API client's own retries: only where a repeat cannot double a message.

A 5xx or a dropped connection may come after Slack stored a `chat.postMessage`; retrying it blindly
posts twice. Those calls are left to the outbox, which first looks for the message by its metadata
key. Everything else (edits, reads, opening modals) is retried here, and 429s everywhere, since a
rate-limited call was not executed.
"""

from __future__ import annotations

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

NOT_IDEMPOTENT = ("chat.postMessage", "files.completeUploadExternal", "conversations.open")


def _idempotent(request: HttpRequest) -> bool:
    return not request.url.rstrip("/").endswith(NOT_IDEMPOTENT)


class SafeServerErrorRetryHandler(AsyncServerErrorRetryHandler):
    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return _idempotent(request) and await super()._can_retry_async(
            state=state, request=request, response=response, error=error
        )


class SafeConnectionErrorRetryHandler(AsyncConnectionErrorRetryHandler):
    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return _idempotent(request) and await super()._can_retry_async(
            state=state, request=request, response=response, error=error
        )


def retry_handlers() -> list[AsyncRetryHandler]:
    """One quick 429 retry (longer waits go back to the outbox), and safe 5xx/connection retries."""
    return [
        AsyncRateLimitErrorRetryHandler(max_retry_count=1),
        SafeServerErrorRetryHandler(max_retry_count=2),
        SafeConnectionErrorRetryHandler(max_retry_count=2),
    ]
