"""Socket Mode at the console: `check` names the mode `serve` will use and tells the token kinds apart,
`serve` stops with one line when Slack refuses the app-level token, and `playground --socket-mode`
(`make playground SOCKET=1`) runs the same page with the bot on a WebSocket."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from test_cli import CSB_BOT, ROOT, SECRETS, bot_env, free_port, run, wait_for_health

from bot.playground import SlackStandin

APP_TOKEN = "xapp-cli-test-secret-app"


def test_check_says_which_mode_serve_will_use(tmp_path: Path) -> None:
    http = run(["check"], bot_env(tmp_path), tmp_path)
    assert http.returncode == 0, http.stdout + http.stderr
    assert "serve will use HTTP: SLACK_APP_TOKEN is unset" in http.stdout
    socket = run(["check"], bot_env(tmp_path, SLACK_APP_TOKEN=APP_TOKEN), tmp_path)
    assert socket.returncode == 0, socket.stdout + socket.stderr
    assert "✓ serve will use Socket Mode: Slack hands out a connection for SLACK_APP_TOKEN" in socket.stdout
    assert APP_TOKEN not in socket.stdout


def test_check_tells_a_bot_token_from_an_app_level_one_when_swapped(tmp_path: Path) -> None:
    env = bot_env(tmp_path, SLACK_BOT_TOKEN=APP_TOKEN, SLACK_APP_TOKEN="xoxb-cli-test-secret-value")
    result = run(["check"], env, tmp_path)
    assert result.returncode == 1
    assert "this one is an app-level token (xapp-), which goes in SLACK_APP_TOKEN" in result.stdout
    assert "this one is a bot token (xoxb-), which goes in SLACK_BOT_TOKEN" in result.stdout
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)


def test_make_playground_socket_passes_the_switch_on() -> None:
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "playground", "SOCKET=1"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == ".venv/bin/csb-bot playground --socket-mode"


@pytest.mark.slow
async def test_serve_stops_with_one_line_when_slack_refuses_the_app_token(tmp_path: Path) -> None:
    standin = SlackStandin(bot_token="xoxb-cli-test-secret-value", app_token="xapp-another-app")
    server = TestServer(standin.build_app(), host="127.0.0.1")
    await server.start_server()
    try:
        env = bot_env(tmp_path, SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_URL=str(server.make_url("/api/")))
        argv = ["serve", "--port", str(free_port())]
        result = await asyncio.to_thread(run, argv, env, tmp_path)
    finally:
        await server.close()
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()  # the start-up log, then why it stopped
    assert lines[-1] == "csb-bot: Slack refused SLACK_APP_TOKEN for Socket Mode: invalid_auth"
    assert "Traceback" not in result.stderr
    assert not any(secret in result.stdout + result.stderr for secret in SECRETS)
    assert [call.ok for call in standin.calls_to("apps.connections.open")] == [False]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["socket", "http"])
def test_the_playground_posts_the_card_either_way(tmp_path: Path, mode: str) -> None:
    """The same page in both modes. Over HTTP too: the server reads every body before its handler
    (its deadline), and the stand-in once took such a body for empty, so no card was ever posted."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = bot_env(tmp_path, SLACK_BOT_TOKEN="", CSB_DATABASE_URL=f"sqlite:///{tmp_path / 'playground.db'}")
    switch = ["--socket-mode"] if mode == "socket" else []
    log = tmp_path / "playground.log"  # a file, not a pipe: nobody reads a pipe until the end
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*CSB_BOT, "playground", *switch, "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        wait_for_health(f"{base}/healthz", proc)
        connections = 1 if mode == "socket" else 0
        _wait(lambda: _get(f"{base}/playground/state")["transport"]["connections"] == connections, proc)
        assert _get(f"{base}/playground/state")["transport"]["mode"] == mode
        answer = _post(f"{base}/playground/command", {"user": "U0ALICE", "text": "run csb_sdlc_fix"})
        assert answer["status"] == 200
        _wait(lambda: '"Approve"' in json.dumps(_get(f"{base}/playground/state")["channels"]), proc)
        with urllib.request.urlopen(f"{base}/", timeout=10) as page:
            assert b"csb" in page.read()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    output = log.read_text()
    assert proc.returncode == 0, output
    assert "set aside" not in output
    assert ("bot over Socket Mode" if mode == "socket" else f"bot at {base}/slack/events") in output


def _wait(check: Any, proc: subprocess.Popen[str]) -> None:
    """Poll the child until `check` holds; its start-up and its card are not timers the test owns."""
    deadline = time.monotonic() + 60
    while not check():
        assert proc.poll() is None, f"the playground exited with {proc.returncode}"
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)
