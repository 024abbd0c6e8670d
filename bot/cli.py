"""`csb-bot serve | playground | check | db`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.default_paths import (
    DEFAULT_CONFIG,
    DEFAULT_DATABASE,
    EXAMPLE_BENCH,
    EXAMPLE_HARBOR,
    PLAYGROUND_CONFIG,
    PLAYGROUND_DATABASE,
    PROJECT_ROOT,
)

if TYPE_CHECKING:
    from bot.listen import Listening

# Each subcommand imports what it runs inside its own function: `--help` needs none of it, `check` and
# `db` need no Slack app, and every test that starts `csb-bot` pays for what it imports
# (tests/test_cli_startup.py keeps the heavy modules out).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 3000


def _shown(path: Path) -> Path:
    return path.relative_to(PROJECT_ROOT)


def _table(rows: Sequence[tuple[str, str]]) -> str:
    """Name and meaning in two columns; a name too long for the first column gets a line of its own."""
    lines = []
    for name, meaning in rows:
        first, *rest = meaning.split("\n")
        if len(name) < 22:
            lines.append(f"  {name:<21} {first}")
        else:
            lines += [f"  {name}", f"  {'':<21} {first}"]
        lines += [f"  {'':<21} {more}" for more in rest]
    return "\n".join(lines)


_DATABASE = (
    "CSB_DATABASE_URL",
    "sqlite:///path, or postgresql+asyncpg://user:password@host:5432/database\n"
    "for several replicas (default: {default})",
)
_CHECKOUT = [
    ("CSB_REPO", f"the CSB checkout (default: {_shown(EXAMPLE_BENCH)})"),
    ("CSB_CONFIG", "the bot's TOML file (default: {config})"),
    ("CSB_HARBOR", "Harbor executable (default: {harbor})"),
    ("CSB_EXECUTOR", "where lanes run: local or ray (default: [executor] kind, else local)"),
    ("CSB_RAY_ADDRESS", "the Ray head's dashboard URL, e.g. http://ray-head:8265 (required with ray)"),
    ("CSB_RAY_TOKEN", "the Ray cluster's token (default: unset)"),
    (
        "CSB_RAY_LANE_RESOURCE",
        "a custom Ray resource each lane's job asks one of, e.g. csb_slot\n(default: unset)",
    ),
]
_SLACK = [
    ("SLACK_BOT_TOKEN", "bot token, xoxb-... (required)"),
    ("SLACK_SIGNING_SECRET", "request signing secret (required)"),
    ("SLACK_APP_TOKEN", "app-level token, xapp-...; set: Socket Mode (default: unset, HTTP)"),
    ("SLACK_API_URL", "Web API base URL (default: https://slack.com/api/)"),
]
# Read as CSB's harness reads them, and passed on to the lanes with the rest of the environment.
_CSB = [
    (
        "HARBOR_ENV",
        "Harbor's environment: daytona (CSB's guarded launcher), or a name or\n"
        "module:Class passed as --env (default: unset, Harbor's own: local Docker)",
    ),
    (
        "SOURCEGRAPH_ACCESS_TOKEN",
        "the MCP lane's token; a request without it is blocked on its card\n"
        "(github-* configs: GITHUB_TOKEN; augment-*: AUGMENT_SESSION_AUTH, or\n"
        "AUGMENT_API_TOKEN and AUGMENT_API_URL)",
    ),
    ("DAYTONA_PARALLEL_TASK_CAP", "parallel slots on Daytona without --parallel (default: 60, at most 124)"),
    ("DAYTONA_OVERRIDE_MEMORY", "Daytona's --override-memory-mb (default: unset)"),
    ("DAYTONA_OVERRIDE_STORAGE", "Daytona's --override-storage-mb (default: unset)"),
    ("HOME", "what ~ means in [engine] account_homes (default: ~/.claude-homes/account*)"),
]
_ENV_HEAD = (
    "environment (an empty variable counts as unset; relative default paths are taken from the project root):"
)
_CSB_HEAD = "CSB's variables, with the meaning CSB's harness gives them:"


def _environment(
    *, slack: bool, database: str, config: Path, harbor: str, csb: Sequence[tuple[str, str]] = _CSB
) -> str:
    rows = [*(_SLACK if slack else []), (_DATABASE[0], _DATABASE[1].format(default=database))]
    rows += [(name, text.format(config=_shown(config), harbor=harbor)) for name, text in _CHECKOUT]
    return f"{_ENV_HEAD}\n{_table(rows)}\n\n{_CSB_HEAD}\n{_table(csb)}"


_SERVE_ENV = _environment(
    slack=True, database=str(_shown(DEFAULT_DATABASE)), config=DEFAULT_CONFIG, harbor="harbor on PATH"
)
_PLAYGROUND_ENV = _environment(
    slack=False,
    database=str(_shown(PLAYGROUND_DATABASE)),
    config=PLAYGROUND_CONFIG,
    harbor=str(_shown(EXAMPLE_HARBOR)),
    csb=[
        (name, f"{text}\n(default: a placeholder: the example bench's agent calls no MCP server)")
        if name == "SOURCEGRAPH_ACCESS_TOKEN"
        else (name, text)
        for name, text in _CSB
    ],
)
_DB_ENV = f"{_ENV_HEAD}\n{_table([(_DATABASE[0], _DATABASE[1].format(default=_shown(DEFAULT_DATABASE)))])}"


_CHECK_ENV = f"""{_SERVE_ENV}
  DOCKER_HOST  where the Docker daemon is asked when HARBOR_ENV is Docker
               (default: unix:///var/run/docker.sock)"""


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Option defaults shown, and the description and environment table kept as written."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from bot.domain.errors import InfraError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # Every tick would log a line, and a tick still running when the next is due is skipped by design.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    # Alembic logs a line per plugin as it is imported, which is now after this set-up (a subcommand
    # imports what it needs), not before; its migration lines still show.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
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
    check = sub.add_parser(
        "check",
        help="probe everything serve and the first run need; exit 0 or 1",
        description="Probe everything `serve` and the first run depend on and print one line per finding:\n"
        "✓ passed, · not applicable or a warning, ✗ a problem. Exit 1 on any ✗. Each probe has its own\n"
        "time limit, so a dependency that hangs is reported, not waited on. Probes: the settings and the\n"
        "config file (every problem); the database (reachable, schema revision); Slack (auth.test with\n"
        "the bot token, the scopes manifest.yml asks for; apps.connections.open with SLACK_APP_TOKEN);\n"
        "the CSB checkout (task file, configs, every task folder); Harbor (version, the lane command,\n"
        "a sample of task.toml files); the MCP lane's credentials; Docker (when HARBOR_ENV is Docker);\n"
        "free disk under runs/ (5 GB blocks, 20 GB recommended); account homes with live tokens; the\n"
        "Ray head and a node offering CSB_RAY_LANE_RESOURCE (with CSB_EXECUTOR=ray); orphaned lane\n"
        "processes on this host (a warning each).",
        epilog=_CHECK_ENV,
        formatter_class=_Help,
    )
    _json_switch(check, "the findings")
    check.set_defaults(func=_check)
    database = sub.add_parser(
        "db",
        help="the database: `db upgrade`, `db current` or `db stats`",
        description="The database's schema: `serve` upgrades it at start, so this is optional; and its size.",
        epilog=_DB_ENV,
        formatter_class=_Help,
    )
    actions = database.add_subparsers(dest="action", required=True)
    for action, summary in _DB_ACTIONS.items():
        step = actions.add_parser(
            action, help=summary, description=summary, epilog=_DB_ENV, formatter_class=_Help
        )
        step.set_defaults(func=_database)
    stats = actions.add_parser(
        "stats", help=_DB_STATS, description=_DB_STATS, epilog=_DB_ENV, formatter_class=_Help
    )
    _json_switch(stats, "the figures")
    stats.set_defaults(func=_database_stats)
    return parser


def _json_switch(parser: argparse.ArgumentParser, what: str) -> None:
    """`--json`: `what` as one JSON document instead of lines of text."""
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,  # a switch: no "(default: False)" in the help
        help=f"print {what} as one JSON document (for automation)",
    )


_DB_ACTIONS = {
    "upgrade": "Bring the schema up to this version's, under a lock, every row kept; print the revision.",
    "current": "Print the database's schema revision against this version's; change nothing.",
}
_DB_STATS = "Print the row count and size of each table, and the whole database's size; change nothing."


def _host_port(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on")


def _serve(args: argparse.Namespace) -> int:
    from bot.check import checkout_problems
    from bot.domain.errors import InfraError
    from bot.settings import load_settings

    settings = load_settings()
    problems = checkout_problems(settings)
    if problems:
        raise InfraError("; ".join(problems))
    # The app is imported once the settings can start it: a refused start costs a second less.
    from functools import partial

    from bot.listen import serve_forever
    from bot.server import build_web_app
    from bot.slack.inbound.socket_mode import run_socket_mode
    from bot.wiring import build_bot

    bot = build_bot(settings)
    bot.redact_logs()
    socket_mode = None
    if settings.slack_app_token is not None:
        socket_mode = partial(
            run_socket_mode, bot.app, settings.slack_app_token.get_secret_value(), bot.inflight
        )
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
    from bot.playground.cli import run_playground

    return run_playground(args.host, args.port, socket_mode=getattr(args, "socket_mode", False))


def _database(args: argparse.Namespace) -> int:
    """Operators' migration step; `serve` runs the same upgrade at start, so it is optional."""
    import asyncio

    from bot.settings import load_database_settings
    from bot.store.db import describe_revision, schema_revision

    settings = load_database_settings()
    found = asyncio.run(schema_revision(settings.csb_database_url, upgrade=args.action == "upgrade"))
    print(f"{settings.database_for_display()}: {describe_revision(found)}")
    return 0 if found.startable else 1


def _database_stats(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from bot.settings import load_database_settings
    from bot.store.sizes import measure_url

    settings = load_database_settings()
    size = asyncio.run(measure_url(settings.csb_database_url))
    if getattr(args, "json", False):
        print(json.dumps({"database": settings.database_for_display(), **size.as_json()}, indent=2))
        return 0
    print(f"{settings.database_for_display()}: {size.total_bytes:,} bytes ({size.how})")
    print(f"  {'table':<20} {'rows':>12} {'bytes':>15}")
    for table in size.tables:
        shown = "?" if table.bytes is None else f"{table.bytes:,}"
        print(f"  {table.name:<20} {table.rows:>12,} {shown:>15}")
    return 0


def _check(args: argparse.Namespace) -> int:
    import asyncio

    from bot.probes import passed, print_json, print_text, run_check

    reports = asyncio.run(run_check(os.environ))
    (print_json if getattr(args, "json", False) else print_text)(reports, sys.stdout)
    return 0 if passed(reports) else 1
