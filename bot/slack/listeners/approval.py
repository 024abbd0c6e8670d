"""The approval card's buttons and modals; the notifier redraws the card from the database."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack.decisions import DecisionHandler
from bot.slack.ids import ActionId, CallbackId
from bot.slack.inflight import InFlight
from bot.slack.notifier import Notifier
from bot.slack.payloads import ButtonClick, ViewSubmission


def register(app: AsyncApp, decisions: DecisionHandler, notifier: Notifier, inflight: InFlight) -> None:
    @app.action(ActionId.APPROVE.value)
    async def on_approve(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            async with inflight.turn():
                await decisions.approve(ButtonClick.from_body(body))
        notifier.kick()

    @app.action(ActionId.REJECT.value)
    async def on_reject(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            await decisions.open_reject(
                ButtonClick.from_body(body)
            )  # no queueing: the trigger expires in 3 s
        notifier.kick()

    @app.action(ActionId.EDIT.value)
    async def on_edit(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            await decisions.open_edit(ButtonClick.from_body(body))  # no queueing: the trigger expires in 3 s
        notifier.kick()

    @app.view(CallbackId.REJECT.value)
    async def on_reject_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            submission = ViewSubmission.from_body(body)
            errors = decisions.validate_reject(submission)
            if errors:
                await ack(response_action="errors", errors=errors)
                return
            await ack()
            async with inflight.turn():
                await decisions.submit_reject(submission)
        notifier.kick()

    @app.view(CallbackId.EDIT.value)
    async def on_edit_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        async with inflight.track():
            submission = ViewSubmission.from_body(body)
            errors = await decisions.validate_edit(submission)  # quick: parse and resolve, no scripts
            if errors:
                await ack(response_action="errors", errors=errors)
                return
            await ack()
            async with inflight.turn():
                await decisions.submit_edit(submission)
        notifier.kick()
