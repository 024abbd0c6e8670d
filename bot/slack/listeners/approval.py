"""`Approve` and `Reject` on the approval card; the notifier redraws the card from the database."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack.decisions import DecisionHandler
from bot.slack.ids import ActionId
from bot.slack.inflight import InFlight
from bot.slack.notifier import Notifier
from bot.slack.payloads import ButtonClick


def register(app: AsyncApp, decisions: DecisionHandler, notifier: Notifier, inflight: InFlight) -> None:
    @app.action(ActionId.APPROVE.value)
    async def on_approve(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            await decisions.approve(ButtonClick.from_body(body))
        notifier.kick()

    @app.action(ActionId.REJECT.value)
    async def on_reject(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            await decisions.reject(ButtonClick.from_body(body))
        notifier.kick()
