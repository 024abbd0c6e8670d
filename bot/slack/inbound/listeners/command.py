"""`/csb`: ack at once, then hand the text to the router (which replies through the outbox)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.domain.command_line import COMMAND
from bot.slack.inbound.commands import CommandRouter
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.inbound.payloads import SlashCommand


def register(app: AsyncApp, router: CommandRouter, listen: Prologue) -> None:
    @app.command(COMMAND)
    async def on_csb(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: router.handle(SlashCommand.from_body(body)))
