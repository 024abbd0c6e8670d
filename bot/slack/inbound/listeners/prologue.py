"""What every listener does around its handler: count the work, ack Slack, wait its turn, kick delivery.

Slack wants its ack within 3 s, so the ack comes before any work: a listener acks and returns, and Bolt
(`process_before_response`, `bot/slack/app.py`) answers Slack as it returns, while the work runs on in a
task counted by `InFlight`. Work that opens a modal runs at once instead of waiting its turn: the click's
`trigger_id` expires 3 s after the click.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck

from bot.services.replays import ReplayGuard
from bot.slack.errors import describe, unless_busy
from bot.slack.inbound.inflight import InFlight
from bot.slack.outbound.notifier import Notifier

Work = Callable[[], Awaitable[None]]
Check = Callable[[], Awaitable[dict[str, str] | None]]
# Tells a person something without the database: a modal's submit has no response_url to answer.
DirectAnswer = Callable[[str, str], Awaitable[None]]


class Prologue:
    def __init__(
        self,
        inflight: InFlight,
        notifier: Notifier,
        replays: ReplayGuard,
        direct: DirectAnswer,
        *,
        once_per_delivery: bool,
        away_line: Callable[[], str | None] = lambda: None,
    ) -> None:
        """`once_per_delivery` (Socket Mode): a request Slack sends again is acked but not acted on
        twice, since the ack of the first one may be what went missing. `away_line`: what a slash
        command's ack says while the bot cannot reach Slack's Web API (None: nothing)."""
        self._inflight = inflight
        self._notifier = notifier
        self._replays = replays
        self._direct = direct
        self._once_per_delivery = once_per_delivery
        self._away_line = away_line

    async def run(self, ack: AsyncAck, body: dict[str, Any], work: Work, *, at_once: bool = False) -> None:
        """Ack, then, in the background, `work` in its sender's turn (or `at_once`), then let the outbox
        deliver."""
        async with self._inflight.track():
            line = self._away_line() if body.get("command") else None  # only a command's ack is shown
            await (ack(text=line) if line else ack())
            self._after_ack(self._work(body, work, at_once))

    async def submit(self, ack: AsyncAck, body: dict[str, Any], check: Check, work: Work) -> None:
        """A modal's submit: `check` (a quick read) keeps the modal open with its errors, else as `run`,
        once per submit however often Slack (or anyone holding the signed body) sends it again.

        A database too busy (or away) for `check` keeps the modal open with the line saying so, the
        person's input intact; one too busy for the work, found after the ack, is answered in their DM.
        """

        async def busy(line: str) -> dict[str, str] | None:
            return busy_errors(body, line)

        async with self._inflight.track():
            errors = await unless_busy(check, busy)
            if errors:
                await ack(response_action="errors", errors=errors)
                return
            await ack()
            self._after_ack(self._work(body, lambda: self._once(body, work), at_once=False))

    def _after_ack(self, work: Awaitable[None]) -> None:
        """The rest of a listener, run once it has returned and Bolt has answered Slack; what it raises is
        logged as Bolt's error handler would (`describe`)."""

        async def then_deliver() -> None:
            await work
            self._notifier.kick()

        self._inflight.start(then_deliver(), describe)

    async def _once(self, body: dict[str, Any], work: Work) -> None:
        user_id = sender(body)

        async def first_time_only() -> None:
            if await self._replays.first_submission(user_id, body.get("view") or {}):
                await work()

        await unless_busy(first_time_only, lambda line: self._direct(user_id, line))

    async def _first(self, body: dict[str, Any]) -> bool:
        delivery = delivery_id(body)
        if not self._once_per_delivery or delivery is None:
            return True
        return await self._replays.first_delivery(delivery)

    async def _work(self, body: dict[str, Any], work: Work, at_once: bool) -> None:
        """A request seen before is skipped here, in its turn: a burst's checks then take turns too
        instead of crowding the event loop while acks are still going out."""
        if at_once:
            if await self._first(body):
                await work()
            return
        async with self._inflight.turn(sender(body)):
            if await self._first(body):
                await work()


def busy_errors(body: dict[str, Any], line: str) -> dict[str, str]:
    """The busy (or away) line under the modal's first input: Slack shows `errors` only under an
    input block."""
    blocks = (body.get("view") or {}).get("blocks") or []
    inputs = [b.get("block_id") for b in blocks if b.get("type") == "input" and b.get("block_id")]
    return {str(inputs[0]): line} if inputs else {}


def sender(body: dict[str, Any]) -> str:
    """Who sent a request: a slash command's `user_id`, an interaction's `user.id`, an event's `user`."""
    user = body.get("user")
    if isinstance(user, dict):
        return str(user.get("id", ""))
    return str(body.get("user_id") or user or (body.get("event") or {}).get("user") or "")


def delivery_id(body: dict[str, Any]) -> str | None:
    """What stays the same when Slack sends a request again: an event's `event_id`, else the
    `trigger_id` every slash command and interaction carries."""
    found = body.get("event_id") or body.get("trigger_id")
    return str(found) if found else None
