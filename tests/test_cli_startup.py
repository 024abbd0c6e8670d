"""Each `csb-bot` start imports its own subcommand's path and nothing more.

`csb-bot --help` once cost 4 s of CPU: `bot.cli` imported the playground, which imported the whole Slack
app and with it matplotlib and numpy, and every test that starts the bot paid for it. Each case here runs
the real command as `python -m bot` does and, as the process exits (a server on SIGTERM, after it has
answered), writes the modules it imported; it fails when a module its path does not need comes back.
`sys.modules` is read rather than `-X importtime`'s list, which misses what `importlib` loads (the
packages load their names that way, `bot.domain.lazy_exports`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import free_port, wait_for_health

pytestmark = pytest.mark.slow  # real child processes

# `python -m bot`, and at exit the names in sys.modules, one a line, to the file MODULES_OUT names (and
# beside it the count of objects frozen out of the collector's full collections).
_RUN_AND_LIST = (
    "import atexit, os, runpy, sys\n"
    "def listed():\n"
    "    import gc\n"
    "    with open(os.environ['MODULES_OUT'], 'w') as out:\n"
    "        out.write('\\n'.join(sorted(sys.modules)))\n"
    "    with open(os.environ['MODULES_OUT'] + '.frozen', 'w') as out:\n"
    "        out.write(str(gc.get_freeze_count()))\n"
    "atexit.register(listed)\n"
    "runpy.run_module('bot', run_name='__main__', alter_sys=True)\n"
)
CSB_BOT = [sys.executable, "-c", _RUN_AND_LIST]
CHARTS = {"matplotlib", "numpy"}  # drawn in the drawing process, computed by the compare statistics
MIGRATION_TOOLING = {"alembic", "mako", "pygments"}  # Mako loads Pygments for its error pages
RAY = {"bot.executors.ray", "bot.executors.ray_check", "bot.rayjobs"}  # where lanes run on a Ray cluster
APP = {"slack_bolt", "bot.slack.app", "bot.services", "bot.engine.factory", "bot.playground", *CHARTS}
ANYTHING_BUT_ARGPARSE = {"pydantic", "sqlalchemy", "aiohttp", "slack_sdk", "bot.settings", "bot.domain", *APP}


def _env(tmp_path: Path) -> dict[str, str]:
    """Settings `serve` starts on; its Slack is a closed port (nothing is asked of it before /healthz)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "CSB_", "DOCKER_"))}
    env.update(
        SLACK_BOT_TOKEN="xoxb-startup-test",
        SLACK_SIGNING_SECRET="startup-test-secret",
        SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/",
        CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'startup.db'}",
        HOME=str(tmp_path),
        MODULES_OUT=str(tmp_path / "modules.txt"),
    )
    return env


def _imported(tmp_path: Path) -> set[str]:
    return set((tmp_path / "modules.txt").read_text().splitlines())


def _run(args: list[str], tmp_path: Path, **env: str) -> set[str]:
    result = subprocess.run(
        [*CSB_BOT, *args],
        env={**_env(tmp_path), **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode in (0, 1, 2), result.stderr[-2000:]
    return _imported(tmp_path)


@pytest.mark.parametrize(
    "args", [["--help"], ["check", "--help"], ["serve", "--help"], ["db", "upgrade", "-h"]]
)
def test_help_imports_nothing_but_the_parser(tmp_path: Path, args: list[str]) -> None:
    imported = _run(args, tmp_path)
    assert "bot.cli" in imported and "argparse" in imported  # the check reads what it should
    assert imported & ANYTHING_BUT_ARGPARSE == set()


def test_check_and_db_import_no_slack_app_and_no_charts(tmp_path: Path) -> None:
    checked = _run(["check"], tmp_path)
    assert {"bot.probes", "bot.store.db", "bot.slack.scopes"} <= checked
    assert checked & APP == set()
    upgraded = _run(["db", "upgrade"], tmp_path)
    assert "bot.store.db" in upgraded
    # No HTTP client either: the settings read the Docker ping's time limit, not the code that pings.
    assert upgraded & {"aiohttp", "slack_sdk", "bot.probes", "bot.slack", *APP} == set()
    measured = _run(["db", "stats"], tmp_path)
    assert "bot.store.sizes" in measured
    assert measured & {"aiohttp", "slack_sdk", "bot.probes", "bot.slack", *APP} == set()


def _serve(tmp_path: Path) -> set[str]:
    """The modules `serve` had loaded once it answered /healthz and was stopped."""
    port = free_port()
    with subprocess.Popen(
        [*CSB_BOT, "serve", "--port", str(port)],
        env=_env(tmp_path),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as bot:
        try:
            assert wait_for_health(f"http://127.0.0.1:{port}/healthz", bot) == b'{"ok": true}'
        finally:
            bot.terminate()
    assert bot.returncode == 0  # stopped as asked, so the list was written at exit
    return _imported(tmp_path)


def test_serve_answers_without_charts_or_the_playground(tmp_path: Path) -> None:
    imported = _serve(tmp_path)
    assert {"slack_bolt", "bot.slack.app", "bot.engine.factory"} <= imported
    assert imported & {"bot.playground", *CHARTS} == set()
    assert imported & RAY == set()  # lanes run locally: the Ray executor is not loaded
    # What it built before answering is out of full collections (`bot/heap.py`): a full collection
    # would otherwise walk it again and again, some 70 to 95 ms each on this machine.
    assert int((tmp_path / "modules.txt.frozen").read_text()) > 50_000


def test_the_ray_executor_loads_where_it_is_chosen(tmp_path: Path) -> None:
    """What shows the check above would see them: `check` on a Ray deployment (its head a closed port)
    loads Ray's check and Jobs client; the executor itself is built only by a serve that runs lanes."""
    head = f"http://127.0.0.1:{free_port()}"
    assert _run(["check"], tmp_path, CSB_EXECUTOR="ray", CSB_RAY_ADDRESS=head) >= RAY - {"bot.executors.ray"}


def test_serve_on_a_database_at_head_loads_no_migration_tooling(tmp_path: Path) -> None:
    """Alembic (and Mako, and Pygments under it) loads only when a migration runs: a start on an empty
    database migrates and loads it, which shows the check would see it; a restart on the same database,
    now at head, reads the revision ids from the migrations' file names and loads none of it."""
    first = _serve(tmp_path)  # the first start creates the schema
    assert first >= MIGRATION_TOOLING
    assert _serve(tmp_path) & MIGRATION_TOOLING == set()


@pytest.mark.parametrize("command", ["serve", "playground"])
def test_a_refused_start_imports_no_app(tmp_path: Path, command: str) -> None:
    """Settings that cannot start the bot are refused before the app is imported."""
    imported = _run([command, "--port", "1"], tmp_path, CSB_DATABASE_URL="mysql://db/csb")
    assert "bot.settings" in imported
    app = {"aiohttp", "bot.wiring", "bot.server", "bot.playground.standin", *APP} - {"bot.playground"}
    assert imported & app == set()  # the playground's package is read for its settings, its stand-in is not
