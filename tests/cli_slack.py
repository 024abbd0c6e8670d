"""A Slack stand-in for the console tests: `csb-bot check` calls `auth.test` (and, with an app-level token,
`apps.connections.open`), so a `check` expected to pass needs a Slack that answers. One stand-in per test
session, served on a loopback port from a daemon thread with its own event loop (the tests that use it
run the bot as a child process and wait on it synchronously)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable

from aiohttp import web

from bot.playground import SlackStandin
from bot.slack.scopes import BOT_SCOPES

BOT_TOKEN = "xoxb-cli-test-secret-value"
APP_TOKEN = "xapp-cli-test-secret-app"

_lock = threading.Lock()
_served: dict[tuple[str, ...], str] = {}


def slack_api_url(scopes: Iterable[str] = BOT_SCOPES) -> str:
    """The `SLACK_API_URL` of a stand-in granting the bot token `scopes` (started on first use)."""
    key = tuple(scopes)
    with _lock:
        if key not in _served:
            _served[key] = _serve(SlackStandin(bot_token=BOT_TOKEN, app_token=APP_TOKEN, scopes=key))
        return _served[key]


def _serve(standin: SlackStandin) -> str:
    loop = asyncio.new_event_loop()
    started: list[str] = []
    ready = threading.Event()

    async def start() -> None:
        runner = web.AppRunner(standin.build_app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        standin.base_url = f"http://127.0.0.1:{port}"
        started.append(f"{standin.base_url}/api/")
        ready.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    threading.Thread(target=serve, name="cli-slack-standin", daemon=True).start()
    if not ready.wait(30):
        raise RuntimeError("the Slack stand-in did not start")
    return started[0]
