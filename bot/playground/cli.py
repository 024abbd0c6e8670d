"""`csb-bot playground`: the bot and a Slack stand-in in one process, on the embedded default.

The stand-in's Web API, the bot's Slack endpoint and the playground's own routes share one port;
requests from "users" are signed exactly as Slack signs them and sent to the bot over loopback. With
`--socket-mode` they go instead as envelopes over the WebSocket the bot opens to the stand-in, as in
a deployment without a public URL; the page is the same either way.
"""

from __future__ import annotations

import os
import secrets
from collections import ChainMap
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

from bot.check import checkout_problems
from bot.default_paths import EXAMPLE_HARBOR, PLAYGROUND_CONFIG, PLAYGROUND_DATABASE
from bot.domain.errors import InfraError
from bot.settings import Settings, load_settings

if TYPE_CHECKING:
    from aiohttp import web

    from bot.listen import Listening
    from bot.wiring import Bot

PLACEHOLDER_TOKEN = "playground-placeholder-not-a-sourcegraph-token"


def playground_settings(host: str, port: int, *, socket_mode: bool = False) -> Settings:
    """Fresh throwaway credentials for the stand-in, whatever SLACK_* says (an app-level token too, for
    Socket Mode); CSB_* variables from the environment still apply."""
    env = os.environ
    values: dict[str, object] = {
        "slack_bot_token": f"xoxb-playground-{secrets.token_hex(8)}",
        "slack_signing_secret": secrets.token_hex(16),
        "slack_app_token": f"xapp-playground-{secrets.token_hex(8)}" if socket_mode else None,
        "slack_api_url": f"http://{host}:{port}/api/",
        "csb_database_url": env.get("CSB_DATABASE_URL", f"sqlite+aiosqlite:///{PLAYGROUND_DATABASE}"),
        "csb_harbor": env.get("CSB_HARBOR", str(EXAMPLE_HARBOR)),
    }
    if "CSB_CONFIG" not in env and PLAYGROUND_CONFIG.exists():
        values["csb_config"] = PLAYGROUND_CONFIG
    return load_settings(**values)


def playground_environ() -> Mapping[str, str]:
    """The example bench's Harbor stand-in calls no MCP server, so a placeholder token lets MCP lanes run."""
    return ChainMap(os.environ, {"SOURCEGRAPH_ACCESS_TOKEN": PLACEHOLDER_TOKEN})


def build_playground(host: str, port: int, *, socket_mode: bool = False) -> web.Application:
    settings = playground_settings(host, port, socket_mode=socket_mode)
    # The bot and the stand-in are imported once the settings can start them (as `csb-bot serve` does).
    from bot.playground.routes import PlaygroundRoutes
    from bot.playground.standin import SlackStandin
    from bot.server import build_web_app
    from bot.wiring import build_bot

    # The example bench's Harbor stand-in builds no image: the card does not ask for a Docker daemon.
    example = settings.resolved_harbor() == str(EXAMPLE_HARBOR)
    bot = build_bot(settings, environ=playground_environ(), docker=False if example else None)
    app_token = settings.slack_app_token.get_secret_value() if settings.slack_app_token else None
    standin = SlackStandin(
        bot_token=settings.slack_bot_token.get_secret_value(),
        base_url=f"http://{host}:{port}",
        app_token=app_token,
    )
    app = build_web_app(bot)
    standin.add_routes(app.router)
    PlaygroundRoutes(standin, settings, f"http://{host}:{port}", socket_mode=socket_mode).add_routes(app)
    app.on_shutdown.append(lambda _app: standin.socket_mode.close())
    return app


def run_playground(host: str, port: int, *, socket_mode: bool = False) -> int:
    """Served like `csb-bot serve` (same limits, same one-line start-up errors) on `host:port`; in
    Socket Mode the bot connects to the stand-in once the port is open."""
    app = build_playground(host, port, socket_mode=socket_mode)
    from bot.listen import serve_forever
    from bot.server import BOT_KEY
    from bot.slack.inbound.socket_mode import run_socket_mode

    bot = app[BOT_KEY]
    bot.redact_logs()  # the stand-in's tokens are throwaway; the database URL may not be
    problems = checkout_problems(bot.settings)
    if problems:
        raise InfraError("; ".join(problems))
    token = bot.settings.slack_app_token
    serve_forever(
        app,
        host,
        port,
        bot.config.server,
        ready=lambda listening: _banner(host, listening, bot),
        alongside=partial(run_socket_mode, bot.app, token.get_secret_value(), bot.inflight)
        if token
        else None,
    )
    return 0


def _banner(host: str, listening: Listening, bot: Bot) -> None:
    base = f"http://{host}:{listening.port}"
    reaches = (
        "bot over Socket Mode (a WebSocket it opens to the stand-in)"
        if bot.settings.slack_app_token
        else f"bot at {base}/slack/events"
    )
    print(
        f"csb-bot playground: open {base}/ in a browser\n"
        f"  Slack stand-in Web API at {base}/api/, {reaches}\n"
        f"  CSB checkout: {bot.settings.resolved_repo()}\n"
        "  Ctrl+C to stop.",
        flush=True,
    )
