"""The console script as an operator runs it: real child processes, real ports."""

from __future__ import annotations

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from cli_slack import BOT_TOKEN, slack_api_url
from postgres_cluster import Cluster
from real_harbor import HOST_ROOT_ENV

from bot.executors.registry import environment_variables
from bot.settings import Settings
from bot.store import schema

ROOT = Path(__file__).resolve().parents[1]
CSB_BOT = [sys.executable, "-m", "bot"]
OLD_DATABASE = ROOT / "tests" / "fixtures" / "databases" / "459accd.db"


def bot_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A deployment `check` passes: a Slack that answers, the example bench on the host (not Docker:
    its Harbor stand-in builds nothing), a Sourcegraph token for its MCP lanes, no account homes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "CSB_", "DOCKER_"))}
    env.update(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET="cli-test-signing-secret",
        SLACK_API_URL=slack_api_url(),
        CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'cli.db'}",
        CSB_HARBOR="configs/example-bench/bin/harbor",
        HARBOR_ENV=HOST_ROOT_ENV,
        SOURCEGRAPH_ACCESS_TOKEN="sgp_cli_test_placeholder",
        HOME=str(tmp_path),
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CSB_BOT + args, env=env, cwd=cwd, capture_output=True, text=True, timeout=180)


def test_check_passes_on_the_embedded_default_from_any_directory(tmp_path: Path) -> None:
    result = run(["check"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_lists_every_problem_and_exits_1(tmp_path: Path) -> None:
    env = bot_env(tmp_path, CSB_REPO=str(tmp_path / "nowhere"), CSB_HARBOR="no-such-harbor-binary")
    result = run(["check"], env, cwd=tmp_path)
    assert result.returncode == 1
    assert "is not a directory" in result.stdout
    assert "harbor executable not found: no-such-harbor-binary" in result.stdout


def test_missing_token_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    env = bot_env(tmp_path)
    del env["SLACK_BOT_TOKEN"]
    result = run(["serve", "--port", "1"], env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "csb-bot: missing environment variable(s): SLACK_BOT_TOKEN"


def test_db_current_and_upgrade_bring_an_old_database_up_to_date(tmp_path: Path) -> None:
    shutil.copy(OLD_DATABASE, tmp_path / "cli.db")
    env = bot_env(tmp_path)
    for var in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"):
        del env[var]  # an operator's migration step needs no Slack token
    before = run(["db", "current"], env, cwd=tmp_path)
    assert before.returncode == 0, before.stderr
    head = schema.head()
    assert before.stdout.strip().endswith(
        f"schema revision {schema.FIRST}; this csb-bot upgrades it to {head} (at start, or `db upgrade`)"
    )
    upgraded = run(["db", "upgrade"], env, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout.strip() == f"sqlite:///{tmp_path / 'cli.db'}: schema revision {head}, up to date"
    with sqlite3.connect(tmp_path / "cli.db") as db:
        assert db.execute("SELECT count(*) FROM lanes").fetchone() == (4,)


def test_serve_upgrades_an_old_database_at_start(tmp_path: Path) -> None:
    shutil.copy(OLD_DATABASE, tmp_path / "cli.db")
    port = free_port()
    env = bot_env(tmp_path)
    with subprocess.Popen(
        [*CSB_BOT, "serve", "--port", str(port)], env=env, cwd=tmp_path, stdout=subprocess.PIPE, text=True
    ) as bot:
        try:
            assert bot.stdout is not None
            assert "listening" in bot.stdout.readline()
            current = run(["db", "current"], env, cwd=tmp_path)
            assert current.stdout.strip().endswith(f"schema revision {schema.head()}, up to date")
        finally:
            bot.terminate()


def test_a_database_password_is_never_shown(tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://bench:hunter2-secret@127.0.0.1:{free_port()}/csb"
    env = bot_env(tmp_path, CSB_DATABASE_URL=url)
    unreachable = run(["db", "current"], env, cwd=tmp_path)
    assert unreachable.returncode == 2
    (line,) = unreachable.stderr.strip().splitlines()
    assert line.startswith("csb-bot: postgresql+asyncpg://bench:***@127.0.0.1:"), line
    checked = run(["check"], env, cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout  # `serve` could not start on it: a problem
    (problem,) = [line for line in checked.stdout.splitlines() if line.startswith("✗")]
    assert problem.startswith("✗ database: postgresql+asyncpg://bench:***@127.0.0.1:"), problem
    refused = run(
        ["serve", "--port", "1"],
        bot_env(tmp_path, CSB_DATABASE_URL="mysql://bench:hunter2-secret@db/csb"),
        cwd=tmp_path,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "csb-bot: invalid settings: CSB_DATABASE_URL: Value error, use sqlite:///path/to/file.db or "
        "postgresql+asyncpg://user:password@host:5432/database, not mysql"
    )
    for result in (unreachable, checked, refused):
        assert "hunter2" not in result.stdout + result.stderr


def test_help_names_the_four_commands(tmp_path: Path) -> None:
    result = run(["--help"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0
    for name in ("serve", "playground", "check", "db"):
        assert name in result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_health(url: str, proc: subprocess.Popen[str]) -> bytes:
    """Poll the child's health endpoint until it answers; the child's start-up is not a timer we own."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"bot exited early: {proc.communicate()}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return bytes(response.read())
        except OSError:
            time.sleep(0.1)
    raise AssertionError("bot never answered /healthz")


@pytest.mark.slow
def test_serve_answers_healthz_and_never_logs_the_token(tmp_path: Path) -> None:
    port = free_port()
    env = bot_env(tmp_path, SLACK_APP_TOKEN="")  # empty as unset: HTTP, not Socket Mode
    proc = subprocess.Popen(
        [*CSB_BOT, "serve", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        body = wait_for_health(f"http://127.0.0.1:{port}/healthz", proc)
        assert body == b'{"ok": true}'
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert f"csb-bot listening (HTTP): http://127.0.0.1:{port}/" in output
    assert "xoxb-cli-test-secret-value" not in output
    assert "cli-test-signing-secret" not in output
    assert (tmp_path / "cli.db").exists()


SECRETS = ("xoxb-cli-test-secret-value", "cli-test-signing-secret", "xapp-cli-test-secret-app", "hunter2")


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """`serve` refused to start: exit 2, one line on stderr and no traceback, no secret echoed."""
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("csb-bot: ")
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
    return line


def check_problems(result: subprocess.CompletedProcess[str]) -> list[str]:
    """`check` found problems: exit 1, one ✗ line each, no secret echoed."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
    return [line[2:] for line in result.stdout.strip().splitlines() if line.startswith("✗ ")]


def test_missing_and_invalid_settings_are_reported_together(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_SIGNING_SECRET="", SLACK_APP_TOKEN="hunter2")
    assert one_line_error(run(["serve", "--port", "1"], env, tmp_path)) == (
        "csb-bot: missing environment variable(s): SLACK_SIGNING_SECRET; invalid settings: "
        "SLACK_APP_TOKEN: Value error, an app-level token starts with xapp- "
        "(Basic Information, App-Level Tokens)"
    )


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_token_or_secret_is_a_missing_one(tmp_path: Path, blank: str) -> None:
    env = bot_env(tmp_path, SLACK_BOT_TOKEN=blank, SLACK_SIGNING_SECRET=blank)
    expected = "missing environment variable(s): SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET"
    assert one_line_error(run(["serve", "--port", "1"], env, tmp_path)) == f"csb-bot: {expected}"
    assert check_problems(run(["check"], env, tmp_path)) == [  # one per line, the other probes still run
        "missing environment variable: SLACK_BOT_TOKEN",
        "missing environment variable: SLACK_SIGNING_SECRET",
    ]


def test_tokens_of_the_wrong_kind_are_named_without_their_value(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_BOT_TOKEN="xoxp-hunter2", SLACK_APP_TOKEN="xoxb-hunter2")
    line = one_line_error(run(["serve", "--port", "1"], env, tmp_path))
    assert line.startswith("csb-bot: invalid settings: ")
    assert "SLACK_BOT_TOKEN: Value error, a bot token starts with xoxb-" in line
    assert "SLACK_APP_TOKEN: Value error, an app-level token starts with xapp-" in line
    bot_token, app_token = check_problems(run(["check"], env, tmp_path))
    assert bot_token.startswith("SLACK_BOT_TOKEN: Value error, a bot token starts with xoxb-")
    assert app_token.startswith("SLACK_APP_TOKEN: Value error, an app-level token starts with xapp-")


def test_csb_config_naming_a_missing_file_is_an_error(tmp_path: Path) -> None:
    typo = tmp_path / "csb-bot.tmol"
    env = bot_env(tmp_path, CSB_CONFIG=str(typo))
    expected = f"CSB_CONFIG names {typo}, which does not exist (unset it for the defaults)"
    assert one_line_error(run(["serve", "--port", "1"], env, tmp_path)) == f"csb-bot: {expected}"
    assert check_problems(run(["check"], env, tmp_path)) == [expected]


def test_every_invalid_value_of_the_config_file_is_named(tmp_path: Path) -> None:
    config = tmp_path / "csb-bot.toml"
    config.write_text(
        "[engine]\ntick_seconds = -1\nparalel = 4\n[server]\nmax_connections = 0\n"
        '[policy.staging]\nmax_parallel = "sixty"\n'
    )
    env = bot_env(tmp_path, CSB_CONFIG=str(config))
    line = one_line_error(run(["serve", "--port", "1"], env, tmp_path))
    for named in (
        "engine.tick_seconds: Input should be greater than 0",
        "engine.paralel: Extra inputs are not permitted",
        "server.max_connections: Input should be greater than or equal to 1",
        "policy.staging.max_parallel: Input should be a valid integer",
    ):
        assert named in line
    assert "sixty" not in line  # names, never values
    (problem,) = check_problems(run(["check"], env, tmp_path))
    assert problem == line.removeprefix("csb-bot: ")


def test_serve_refuses_a_csb_repo_that_is_not_a_checkout_as_check_does(tmp_path: Path) -> None:
    (tmp_path / "not-csb").mkdir()
    env = bot_env(tmp_path, CSB_REPO=str(tmp_path / "not-csb"))
    line = one_line_error(run(["serve", "--port", str(free_port())], env, tmp_path))
    assert line.startswith(f"csb-bot: CSB checkout {tmp_path / 'not-csb'}: the CSB checkout has no task file")
    assert not (tmp_path / "cli.db").exists()  # refused before anything started
    assert check_problems(run(["check"], env, tmp_path))[0] == line.removeprefix("csb-bot: ")


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(run(["serve", "--port", str(port)], bot_env(tmp_path), tmp_path))
    assert line == (
        f"csb-bot: cannot listen on 127.0.0.1:{port}: the port is in use (another csb-bot?); "
        "choose another with --port"
    )


@pytest.mark.parametrize("command", ["serve", "playground"])
def test_a_database_folder_that_does_not_exist_is_an_error(tmp_path: Path, command: str) -> None:
    env = bot_env(tmp_path, CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'typo' / 'bot.db'}")
    line = one_line_error(run([command, "--port", "1"], env, tmp_path))
    assert line == (
        f"csb-bot: invalid settings: CSB_DATABASE_URL: Value error, the folder {tmp_path / 'typo'} "
        "does not exist; create it or choose another path"
    )
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize("command", ["serve", "playground"])
def test_help_of_serve_and_playground_shows_the_defaults(tmp_path: Path, command: str) -> None:
    result = run([command, "--help"], bot_env(tmp_path), tmp_path)
    assert result.returncode == 0
    assert re.search(r"--host HOST +address to listen on \(default: 127\.0\.0\.1\)", result.stdout)
    assert re.search(r"--port PORT +port to listen on \(default: 3000\)", result.stdout)
    assert "CSB_REPO              the CSB checkout (default: configs/example-bench)" in result.stdout
    assert "CSB_CONFIG" in result.stdout and "(default: configs/" in result.stdout


def test_make_playground_passes_port_and_host_on(tmp_path: Path) -> None:
    """`make playground PORT=3100 HOST=0.0.0.0` runs the playground there (dry run: nothing installed)."""
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "playground", "PORT=3100", "HOST=0.0.0.0"],
        cwd=ROOT,
        # Not a sub-make of `make test`: its flags would add "Leaving directory" lines.
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == (
        ".venv/bin/csb-bot playground --host 0.0.0.0 --port 3100"
    )


@pytest.mark.slow
def test_playground_serves_on_the_port_it_is_given_with_its_own_tokens(tmp_path: Path) -> None:
    port = free_port()
    env = bot_env(tmp_path, SLACK_BOT_TOKEN="", SLACK_APP_TOKEN="not-a-token")  # the playground's own
    env["CSB_DATABASE_URL"] = f"sqlite:///{tmp_path / 'playground.db'}"
    proc = subprocess.Popen(
        [*CSB_BOT, "playground", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert wait_for_health(f"http://127.0.0.1:{port}/healthz", proc) == b'{"ok": true}'
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
            assert b"csb" in page.read()
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert f"open http://127.0.0.1:{port}/ in a browser" in output


@pytest.mark.slow
def test_serve_on_postgresql_logs_the_database_without_its_password(
    tmp_path: Path, postgres: Cluster | None
) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database(migrated=False)
    with_password = url.replace(f"://{postgres.user}@", f"://{postgres.user}:hunter2-secret@")
    port = free_port()
    proc = subprocess.Popen(
        [*CSB_BOT, "serve", "--port", str(port)],
        env=bot_env(tmp_path, CSB_DATABASE_URL=with_password),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert wait_for_health(f"http://127.0.0.1:{port}/healthz", proc) == b'{"ok": true}'
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert f"database postgresql+asyncpg://{postgres.user}:***@127.0.0.1:{postgres.port}/" in output
    assert "hunter2" not in output
    current = run(["db", "current"], bot_env(tmp_path, CSB_DATABASE_URL=with_password), cwd=tmp_path)
    assert current.stdout.strip().endswith(f"schema revision {schema.head()}, up to date")
    assert "hunter2" not in current.stdout + current.stderr


def test_serve_help_names_every_variable_the_settings_read_with_its_default(tmp_path: Path) -> None:
    """Derived from the settings class, so a variable added there and not to the help fails here."""
    shown = run(["serve", "--help"], bot_env(tmp_path), tmp_path).stdout
    lines = shown.splitlines()
    # Each executor's variables are read by its own settings model, gathered in `executor_variables`.
    settings_variables = [field.upper() for field in Settings.model_fields if field != "executor_variables"]
    for name in [*settings_variables, *environment_variables()]:
        (at,) = [i for i, line in enumerate(lines) if line.split()[:1] == [name]]
        entry = " ".join(lines[at : at + 3])  # a long entry goes on over the next lines
        assert "required" in entry or "default" in entry, (name, entry)
    for csb_variable in ("HARBOR_ENV", "SOURCEGRAPH_ACCESS_TOKEN", "DAYTONA_PARALLEL_TASK_CAP"):
        assert f"  {csb_variable}" in shown
    assert "postgresql+asyncpg://user:password@host:5432/database" in shown


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (["check"], "Probe everything `serve` and the first run depend on"),
        (["db"], "The database's schema"),
        (["db", "current"], "Print the database's schema revision"),
        (["db", "upgrade"], "Bring the schema up to this version's"),
        (["db", "stats"], "Print the row count and size of each table"),
    ],
)
def test_every_subcommand_has_its_own_help(tmp_path: Path, command: list[str], says: str) -> None:
    result = run([*command, "--help"], bot_env(tmp_path), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: csb-bot {' '.join(command)} [-h]")
    assert says in result.stdout and "CSB_DATABASE_URL" in result.stdout
