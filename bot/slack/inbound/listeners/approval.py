"""The approval card's buttons and modals; the notifier redraws the card from the database."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack.ids import ActionId, CallbackId
from bot.slack.inbound.decisions import DecisionHandler
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.inbound.payloads import ButtonClick, ViewSubmission


def register(app: AsyncApp, decisions: DecisionHandler, listen: Prologue) -> None:
    @app.action(ActionId.APPROVE.value)
    async def on_approve(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: decisions.approve(ButtonClick.from_body(body)))

    @app.action(ActionId.REJECT.value)
    async def on_reject(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: decisions.open_reject(ButtonClick.from_body(body)), at_once=True)

    @app.action(ActionId.EDIT.value)
    async def on_edit(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: decisions.open_edit(ButtonClick.from_body(body)), at_once=True)

    @app.view(CallbackId.REJECT.value)
    async def on_reject_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        submission = ViewSubmission.from_body(body)

        async def check() -> dict[str, str] | None:
            return decisions.validate_reject(submission)

        await listen.submit(ack, body, check, lambda: decisions.submit_reject(submission))

    @app.view(CallbackId.EDIT.value)
    async def on_edit_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        submission = ViewSubmission.from_body(body)
        check = decisions.validate_edit  # quick: parse and resolve, no scripts
        await listen.submit(ack, body, lambda: check(submission), lambda: decisions.submit_edit(submission))
