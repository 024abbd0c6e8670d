"""The console script as an operator runs it: real child processes, real ports."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CSB_BOT = [sys.executable, "-m", "bot"]


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


def test_database_from_an_older_version_is_one_line_naming_what_it_lacks(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "cli.db") as db:
        db.execute("create table runs (id integer primary key, request_id integer, state varchar)")
    env = bot_env(tmp_path, CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'cli.db'}")
    result = run(["serve", "--port", str(free_port())], env, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("csb-bot: the database sqlite+aiosqlite:///") and "older csb-bot" in line
    assert "table runs lacks run_dir, model, parallel" in line and "CSB_DATABASE_URL" in line


def test_a_database_other_than_sqlite_is_refused_without_echoing_its_password(tmp_path: Path) -> None:
    env = bot_env(tmp_path, CSB_DATABASE_URL="postgresql://bench:hunter2-secret@db.internal/csb")
    result = run(["serve", "--port", "1"], env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "csb-bot: invalid settings: CSB_DATABASE_URL: Value error, only SQLite is supported so far "
        "(sqlite:///path/to/file.db), not postgresql"
    )


def test_help_names_the_three_commands(tmp_path: Path) -> None:
    result = run(["--help"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0
    for name in ("serve", "playground", "check"):
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
