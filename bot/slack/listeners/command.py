"""`/csb`: ack at once, then hand the text to the router (which replies through the outbox)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.slack.commands import CommandRouter
from bot.slack.listeners.prologue import Prologue
from bot.slack.payloads import SlashCommand


def register(app: AsyncApp, router: CommandRouter, listen: Prologue) -> None:
    @app.command("/csb")
    async def on_csb(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: router.handle(SlashCommand.from_body(body)))
