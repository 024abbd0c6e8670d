"""The console script as an operator runs it: real child processes, real ports."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from postgres_cluster import Cluster

from bot.store import schema

ROOT = Path(__file__).resolve().parents[1]
CSB_BOT = [sys.executable, "-m", "bot"]
OLD_DATABASE = ROOT / "tests" / "fixtures" / "databases" / "459accd.db"


def bot_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "CSB_"))}
    env.update(
        SLACK_BOT_TOKEN="xoxb-cli-test-secret-value",
        SLACK_SIGNING_SECRET="cli-test-signing-secret",
        CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'cli.db'}",
        CSB_HARBOR="configs/example-bench/bin/harbor",
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(CSB_BOT + args, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


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
    assert checked.returncode == 0, checked.stdout
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
    deadline = time.monotonic() + 30
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
    env = bot_env(tmp_path)
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
    assert "xoxb-cli-test-secret-value" not in output
    assert "cli-test-signing-secret" not in output
    assert (tmp_path / "cli.db").exists()


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
