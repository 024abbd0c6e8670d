"""`Promote to official` under a finished staging run's report, and Approve/Reject on a promotion card."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.services.promotion_gate import PromotionGate
from bot.services.queries import Viewer
from bot.services.replays import ReplayGuard
from bot.services.reply_queue import ReplyService
from bot.slack.errors import answering
from bot.slack.ids import ActionId
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.inbound.payloads import ButtonClick


class PromotionClicks:
    """Each click authorised from the database at click time; a refusal is answered to the clicker."""

    def __init__(
        self, gate: PromotionGate, replies: ReplyService, directory: Directory, replays: ReplayGuard
    ) -> None:
        self._gate = gate
        self._replies = replies
        self._directory = directory
        self._replays = replays

    async def promote(self, click: ButtonClick) -> None:
        await self._answer(click, self._promote)

    async def approve(self, click: ButtonClick) -> None:
        await self._answer(click, self._approve)

    async def reject(self, click: ButtonClick) -> None:
        await self._answer(click, self._reject)

    async def _promote(self, click: ButtonClick) -> str | None:
        viewer = Viewer(actor=await self._directory.actor(click.user_id), channel_id=click.channel_id or "")
        await self._gate.request(click.row_id, viewer, force=False, quarantine=False)
        return None  # the promotion card in the channel is the answer

    async def _approve(self, click: ButtonClick) -> str | None:
        return await self._gate.approve(click.row_id, await self._directory.actor(click.user_id))

    async def _reject(self, click: ButtonClick) -> str | None:
        return await self._gate.reject(click.row_id, await self._directory.actor(click.user_id))

    async def _answer(self, click: ButtonClick, act: Callable[[ButtonClick], Awaitable[str | None]]) -> None:
        if not await self._replays.first_time(click.user_id, click.action_id, click.action_ts):
            return
        await answering(lambda: act(click), lambda text: self._replies.ephemeral(click.response_url, text))


def register(app: AsyncApp, clicks: PromotionClicks, listen: Prologue) -> None:
    @app.action(ActionId.PROMOTE.value)
    async def on_promote(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.promote(ButtonClick.from_body(body)))

    @app.action(ActionId.PROMOTION_APPROVE.value)
    async def on_approve(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.approve(ButtonClick.from_body(body)))

    @app.action(ActionId.PROMOTION_REJECT.value)
    async def on_reject(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.reject(ButtonClick.from_body(body)))
