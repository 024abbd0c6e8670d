"""`csb-bot serve | playground | check`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence

from aiohttp import web
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.check import run_checks
from bot.domain.errors import InfraError
from bot.playground.cli import run_playground
from bot.server import build_web_app
from bot.settings import load_settings
from bot.wiring import build_bot

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Every tick would log a line, and a tick still running when the next is due is skipped by design.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    try:
        return int(args.func(args))
    except InfraError as exc:
        print(f"csb-bot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="csb-bot", description="Slack bot for paired CodeScaleBench runs.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the bot (Socket Mode when SLACK_APP_TOKEN is set, else HTTP)")
    _host_port(serve)
    serve.set_defaults(func=_serve)
    playground = sub.add_parser("playground", help="run the bot against a local Slack stand-in and its page")
    _host_port(playground)
    playground.set_defaults(func=_playground)
    check = sub.add_parser("check", help="validate settings, config file and CSB checkout; exit 0 or 1")
    check.set_defaults(func=_check)
    return parser


def _host_port(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST)
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)


def _serve(args: argparse.Namespace) -> int:
    settings = load_settings()
    bot = build_bot(settings)
    web_app = build_web_app(bot)
    if settings.slack_app_token is None:
        web.run_app(web_app, host=args.host, port=args.port, print=_printer("csb-bot listening"))
        return 0
    return asyncio.run(
        _serve_socket_mode(web_app, bot.app, settings.slack_app_token.get_secret_value(), args)
    )


async def _serve_socket_mode(
    web_app: web.Application, app: AsyncApp, app_token: str, args: argparse.Namespace
) -> int:
    runner = web.AppRunner(web_app)  # still serves /healthz and runs the timers
    await runner.setup()
    await web.TCPSite(runner, args.host, args.port).start()
    try:
        await AsyncSocketModeHandler(app, app_token).start_async()
    finally:
        await runner.cleanup()
    return 0


def _playground(args: argparse.Namespace) -> int:
    return run_playground(args.host, args.port)


def _check(_args: argparse.Namespace) -> int:
    problems = run_checks()
    for line in problems:
        print(f"✗ {line}")
    if not problems:
        print("✓ settings, config file and CSB checkout look fine")
    return 1 if problems else 0


def _printer(prefix: str) -> Callable[[str], None]:
    def _print(message: str) -> None:
        print(f"{prefix}: {message}", flush=True)

    return _print
