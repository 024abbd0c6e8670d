"""Who the bot is on Slack (`auth.test`), asked once at start, so no request waits on the Web API.

Bolt's single-team authorization calls `auth.test` on the first request and, when the Web API cannot be
reached (egress blocked, no proxy), lets the connection error escape: every slash command and click gets
HTTP 500 and a traceback. Here the question is asked at start, with retries, and answered by one log line;
requests are authorized from what is known (the bot token; the team and user from the request itself),
so they are acknowledged within Slack's 3 s whatever the Web API's state, and their work waits in the
outbox until Slack can be reached. The bot reads nothing else from the answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from slack_bolt.authorization import AuthorizeResult
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

START_RETRY_DELAYS_SEC = (1.0, 2.0, 4.0)  # at start: four tries in about 7 s
RECHECK_DELAY_SEC = 60.0  # after that, quietly, until Slack answers (one line when it does)


class SlackIdentity:
    def __init__(
        self,
        client: AsyncWebClient,
        api_url: str,
        *,
        retry_delays: Sequence[float] = START_RETRY_DELAYS_SEC,
        recheck_delay: float = RECHECK_DELAY_SEC,
    ) -> None:
        self._client = client
        self._api_url = api_url
        self._retry_delays = tuple(retry_delays)
        self._recheck_delay = recheck_delay
        self._known: AuthorizeResult | None = None
        self.unreachable = False
        """True after the start-up check could not reach the Web API, until a later check did."""

    async def learn(self) -> None:
        """Ask `auth.test` with retries; log one line for the outcome; if Slack could not be reached,
        keep asking in the background (cancelled when serving stops) and log one line when it answers."""
        problem = await self._ask()
        for delay in self._retry_delays:
            if problem is None:
                break
            await asyncio.sleep(delay)
            problem = await self._ask()
        if problem is None:
            return
        self.unreachable = True
        log.error(
            "Slack's Web API at %s cannot be reached (%s): slash commands and clicks are still acknowledged; "
            "cards and replies wait in the outbox until it can be. Check egress and HTTPS_PROXY.",
            self._api_url,
            problem,
        )
        while problem is not None:
            await asyncio.sleep(self._recheck_delay)
            problem = await self._ask(quiet=True)
        self.unreachable = False

    async def authorize(
        self, enterprise_id: str | None, team_id: str | None, user_id: str | None
    ) -> AuthorizeResult:
        """Bolt's `authorize`: no Web API call, so a request never waits on (or fails with) Slack."""
        known = self._known
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            bot_token=self._client.token,
            bot_id=known.bot_id if known else None,
            bot_user_id=known.bot_user_id if known else None,
            user_id=user_id,
        )

    async def _ask(self, *, quiet: bool = False) -> str | None:
        """None when Slack answered (and the identity is known); else why not, in a few words."""
        try:
            answer = await self._client.auth_test()
        except SlackApiError as exc:
            error = exc.response.get("error", "unknown error")
            log.error(
                "Slack refuses SLACK_BOT_TOKEN: auth.test answered %s; `csb-bot check` says more", error
            )
            return None  # Slack answered: retrying will not change its mind
        except (SlackClientError, OSError, TimeoutError) as exc:
            return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200] or type(exc).__name__
        self._known = AuthorizeResult(
            enterprise_id=answer.get("enterprise_id"),
            team_id=answer.get("team_id"),
            bot_id=answer.get("bot_id"),
            bot_user_id=answer.get("user_id"),
            bot_token=self._client.token,
        )
        log.info(
            "Slack %s: team %s, bot user @%s",
            "answers again" if quiet else "answers",
            answer.get("team"),
            answer.get("user"),
        )
        return None
