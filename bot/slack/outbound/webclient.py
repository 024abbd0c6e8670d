"""The Web API client the bot talks to Slack with: every call bounded in time, every answer checked.

A call that hangs must end (`CALL_TIMEOUT_SECONDS`) so its row can be retried and the rest of the
outbox is not held up. An answer that is not a JSON object (a proxy's error page, a body cut off
halfway) is a failed call, not a success with no data: it raises `MalformedAnswer`, which the outbox retries.
"""

from __future__ import annotations

from typing import Any

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

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:
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
