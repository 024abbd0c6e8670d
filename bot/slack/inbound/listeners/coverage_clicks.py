"""`Fill gaps` and `Plan variance` under a `/csb coverage` answer: the same requests as `--fill`/`--plan`."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.domain.errors import UserInputError
from bot.services.coverage import CoverageService
from bot.services.coverage_args import parse_coverage_args
from bot.services.queries import Viewer
from bot.services.replays import ReplayGuard
from bot.services.reply_queue import ReplyService
from bot.slack.errors import answering
from bot.slack.ids import ActionId
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.inbound.payloads import ButtonClick
from bot.slack.views.coverage import waves_requested_text


class CoverageClicks:
    """The button's value is the question the answer showed (suites, model, target, staging); it is parsed
    as typed text is, and the waves are counted again now, by the clicker, under `/csb run`'s policy."""

    def __init__(
        self, coverage: CoverageService, replies: ReplyService, directory: Directory, replays: ReplayGuard
    ) -> None:
        self._coverage = coverage
        self._replies = replies
        self._directory = directory
        self._replays = replays

    async def request(self, click: ButtonClick) -> None:
        if not await self._replays.first_time(click.user_id, click.action_id, click.action_ts):
            return
        await answering(
            lambda: self._request(click), lambda text: self._replies.ephemeral(click.response_url, text)
        )

    async def _request(self, click: ButtonClick) -> str:
        args = parse_coverage_args(click.value)
        fill = click.action_id == ActionId.FILL_GAPS
        if (args.fill, args.plan) != (fill, not fill):  # a value not made by `coverage_buttons`
            raise UserInputError("this button is not valid any more; ask `/csb coverage` again")
        actor = await self._directory.actor(click.user_id)
        made = await self._coverage.request_waves(
            args,
            Viewer(actor=actor, channel_id=click.channel_id or ""),
            actor=actor,
            response_url=click.response_url,
            trigger_id=click.trigger_id,
        )
        return waves_requested_text(made)


def register(app: AsyncApp, clicks: CoverageClicks, listen: Prologue) -> None:
    for action in (ActionId.FILL_GAPS, ActionId.PLAN_VARIANCE):

        @app.action(action.value)
        async def on_click(ack: AsyncAck, body: dict[str, Any]) -> None:
            await listen.run(ack, body, lambda: clicks.request(ButtonClick.from_body(body)))
