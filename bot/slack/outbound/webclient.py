"""The Web API client the bot talks to Slack with: every call bounded in time, every answer checked.

A call that hangs must end (`CALL_TIMEOUT_SECONDS`) so its row can be retried and the rest of the
outbox is not held up. An answer that is not a JSON object (a proxy's error page, a body cut off
halfway) is a failed call, not a success with no data: it raises `MalformedAnswer`, which the outbox retries.

The calls share one connection pool, an aiohttp session made on the first call in the running loop:
slack_sdk's default, a session per call, pays for a connector, a socket (and over HTTPS a TLS handshake)
every time, on the event loop the acks of incoming requests share.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.slack.outbound.webapi_retries import retry_handlers

# Slack answers in well under a second; a call still open after this is as good as lost.
CALL_TIMEOUT_SECONDS = 10.0


class MalformedAnswer(SlackClientError):
    """Slack (or something in between) answered with a body that is not a Web API answer."""


class CheckedWebClient(AsyncWebClient):
    """`AsyncWebClient` whose calls raise `MalformedAnswer` for a body that is not a JSON object.

    Left alone, slack_sdk turns a `text/plain` body into an `AttributeError` and an HTML body into a
    `SlackApiError` without an `error`, which look like a bug and like a refusal respectively.
    """

    _pool_loop: asyncio.AbstractEventLoop | None = None  # the loop this client's own session belongs to

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
        self._pool()
        try:
            response = await super().api_call(api_method, **kwargs)
        except SlackApiError as exc:
            status = getattr(exc.response, "status_code", None)
            if status is None:  # slack_sdk's error for JSON it could not read carries aiohttp's response
                raise MalformedAnswer(f"{api_method} answered JSON that does not parse (cut off?)") from exc
            if status < 500 and status != 429 and not _is_answer(exc.response.data):
                raise MalformedAnswer(f"{api_method} answered HTTP {status} without a JSON body") from exc
            raise
        except (AttributeError, ValueError) as exc:  # slack_sdk reading a body that is not JSON
            raise MalformedAnswer(f"{api_method} answered a body that is not JSON") from exc
        if not _is_answer(response.data):
            raise MalformedAnswer(f"{api_method} answered a body that is not JSON")
        return response

    def _pool(self) -> None:
        """This loop's session, made on first use (again if closed, or made in a loop now gone). Each
        call is timed out as slack_sdk's own session would: `timeout` in all."""
        loop = asyncio.get_running_loop()
        if self.session is not None and self._pool_loop is None:
            return  # a session the caller handed in
        if self.session is not None and not self.session.closed and self._pool_loop is loop:
            return
        self.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout), trust_env=self.trust_env_in_session
        )
        self._pool_loop = loop

    async def close(self) -> None:
        """Let go of the pooled connections (at shutdown); a later call opens a new pool."""
        if self._pool_loop is None:
            return  # none of its own (a session handed in is its giver's to close)
        session, loop = self.session, self._pool_loop
        self.session, self._pool_loop = None, None
        if session is not None and not session.closed and loop is asyncio.get_running_loop():
            await session.close()


async def close_client(client: AsyncWebClient) -> None:
    """At shutdown: the bot's client lets go of its connections (another client has none of its own)."""
    if isinstance(client, CheckedWebClient):
        await client.close()


def _is_answer(data: object) -> bool:
    return isinstance(data, dict) and isinstance(data.get("ok"), bool)


def web_client(token: str, base_url: str, timeout: float) -> CheckedWebClient:
    """Retries 429 (Retry-After) and 5xx where a repeat cannot double a post; each try is timed out."""
    return CheckedWebClient(
        token=token,
        base_url=base_url,
        timeout=timeout,  # type: ignore[arg-type]  # slack_sdk annotates int; aiohttp takes seconds as a float
        retry_handlers=retry_handlers(),
    )
