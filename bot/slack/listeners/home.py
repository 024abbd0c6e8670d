"""`app_home_opened`: publish the user's home tab (the notifier renders it from the database)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.services.home import HomeService
from bot.slack.inflight import InFlight
from bot.slack.notifier import Notifier


def register(app: AsyncApp, home: HomeService, notifier: Notifier, inflight: InFlight) -> None:
    @app.event("app_home_opened")
    async def on_home_opened(ack: AsyncAck, event: dict[str, Any]) -> None:
        async with inflight.track():
            await ack()
            async with inflight.turn():
                if event.get("tab", "home") == "home":
                    await home.opened(str(event["user"]))
        notifier.kick()
