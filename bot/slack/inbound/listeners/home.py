"""`app_home_opened`: publish the user's home tab (the notifier renders it from the database)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.services.home import HomeService
from bot.slack.inbound.listeners.prologue import Prologue


def register(app: AsyncApp, home: HomeService, listen: Prologue) -> None:
    @app.event("app_home_opened")
    async def on_home_opened(ack: AsyncAck, body: dict[str, Any], event: dict[str, Any]) -> None:
        async def work() -> None:
            if event.get("tab", "home") == "home":
                await home.opened(str(event["user"]))

        await listen.run(ack, body, work)
