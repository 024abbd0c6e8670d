"""`csb-bot serve | playground | check | db`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from bot.check import checkout_problems, run_checks, serve_mode
from bot.domain.errors import InfraError
from bot.listen import Listening, serve_forever
from bot.playground.cli import EXAMPLE_HARBOR, PLAYGROUND_CONFIG, PLAYGROUND_DATABASE, run_playground
from bot.server import build_web_app
from bot.settings import (
    DEFAULT_CONFIG,
    DEFAULT_DATABASE,
    EXAMPLE_BENCH,
    PROJECT_ROOT,
    load_database_settings,
    load_settings,
)
from bot.slack.socket_mode import run_socket_mode
from bot.store.db import describe_revision, schema_revision
from bot.wiring import build_bot

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000


def _shown(path: Path) -> Path:
    return path.relative_to(PROJECT_ROOT)


_SERVE_ENV = f"""environment (relative default paths are taken from the project root):
  SLACK_BOT_TOKEN       bot token, xoxb-... (required)
  SLACK_SIGNING_SECRET  request signing secret (required)
  SLACK_APP_TOKEN       app-level token, xapp-...; set: Socket Mode (default: unset, HTTP)
  SLACK_API_URL         Web API base URL (default: https://slack.com/api/)
  CSB_REPO              the CSB checkout (default: {_shown(EXAMPLE_BENCH)})
  CSB_DATABASE_URL      sqlite:///path (default: {_shown(DEFAULT_DATABASE)})
  CSB_CONFIG            the bot's TOML file (default: {_shown(DEFAULT_CONFIG)})
  CSB_HARBOR            Harbor executable (default: harbor on PATH)
  CSB_EXECUTOR          where lanes run: local or ray (default: local)
  CSB_RAY_ADDRESS       the Ray head's dashboard URL (required with ray)
  CSB_RAY_TOKEN         the Ray cluster's token (optional)"""

_PLAYGROUND_ENV = f"""environment (relative default paths are taken from the project root):
  CSB_REPO              the CSB checkout (default: {_shown(EXAMPLE_BENCH)})
  CSB_DATABASE_URL      sqlite:///path (default: {_shown(PLAYGROUND_DATABASE)})
  CSB_CONFIG            the bot's TOML file (default: {_shown(PLAYGROUND_CONFIG)})
  CSB_HARBOR            Harbor executable (default: {_shown(EXAMPLE_HARBOR)})"""


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Option defaults shown, and the description and environment table kept as written."""


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
    serve = sub.add_parser(
        "serve",
        help="run the bot (Socket Mode when SLACK_APP_TOKEN is set, else HTTP)",
        description="Run the bot: Socket Mode when SLACK_APP_TOKEN is set, else HTTP with Slack requests at\n"
        "POST /slack/events. Either way GET /healthz answers on --host:--port.",
        epilog=_SERVE_ENV,
        formatter_class=_Help,
    )
    _host_port(serve)
    serve.set_defaults(func=_serve)
    playground = sub.add_parser(
        "playground",
        help="run the bot against a local Slack stand-in and its page",
        description="Run the bot, a local Slack stand-in and its page (at /) on one port. It makes its own\n"
        "Slack tokens: SLACK_* variables are ignored. --socket-mode: the bot takes Slack's requests over\n"
        "a WebSocket it opens to the stand-in, as `serve` does with SLACK_APP_TOKEN.",
        epilog=_PLAYGROUND_ENV,
        formatter_class=_Help,
    )
    _host_port(playground)
    playground.add_argument(
        "--socket-mode",
        action="store_true",
        default=argparse.SUPPRESS,  # a switch: no "(default: False)" in the help
        help="Socket Mode instead of signed HTTP requests",
    )
    playground.set_defaults(func=_playground)
    check = sub.add_parser("check", help="validate settings, config file and CSB checkout; exit 0 or 1")
    check.set_defaults(func=_check)
    database = sub.add_parser("db", help="the database schema: `db upgrade` or `db current`")
    database.add_argument("action", choices=["upgrade", "current"], help="upgrade to this version, or show")
    database.set_defaults(func=_database)
    return parser


def _host_port(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")


def _serve(args: argparse.Namespace) -> int:
    settings = load_settings()
    problems = checkout_problems(settings)
    if problems:
        raise InfraError("; ".join(problems))
    bot = build_bot(settings)
    socket_mode = None
    if settings.slack_app_token is not None:
        socket_mode = partial(run_socket_mode, bot.app, settings.slack_app_token.get_secret_value())
    mode = "HTTP" if socket_mode is None else "Socket Mode; HTTP for /healthz"
    serve_forever(
        build_web_app(bot),
        args.host,
        args.port,
        bot.config.server,
        ready=lambda listening: _announce(mode, listening, args.host),
        alongside=socket_mode,
    )
    return 0


def _announce(mode: str, listening: Listening, host: str) -> None:
    print(f"csb-bot listening ({mode}): http://{host}:{listening.port}/", flush=True)


def _playground(args: argparse.Namespace) -> int:
    return run_playground(args.host, args.port, socket_mode=getattr(args, "socket_mode", False))


def _database(args: argparse.Namespace) -> int:
    """Operators' migration step; `serve` runs the same upgrade at start, so it is optional."""
    settings = load_database_settings()
    found = asyncio.run(schema_revision(settings.csb_database_url, upgrade=args.action == "upgrade"))
    print(f"{settings.database_for_display()}: {describe_revision(found)}")
    return 0 if found.startable else 1


def _check(_args: argparse.Namespace) -> int:
    problems, notes = run_checks()
    for line in notes:
        print(f"· {line}")
    for line in problems:
        print(f"✗ {line}")
    if not problems:
        print("✓ settings, config file and CSB checkout look fine")
        print(f"  {serve_mode()}")
    return 1 if problems else 0
