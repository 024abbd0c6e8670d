"""`serve` when Slack's Web API cannot be reached (egress blocked, no proxy): it starts, says so in one log
line after its start-up retries, and still acknowledges every slash command and click within Slack's 3 s,
never with a 500 and a traceback; the work is kept (in the database and the outbox) for when Slack is back.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from bot_process import world
from harness import SECRET
from store_reads import request_count
from test_cli import free_port
from waiting import until

from bot.playground import REQUESTER, SlackDriver
from bot.slack.errors import SLACK_AWAY

pytestmark = pytest.mark.slow  # real child processes

ACK_LIMIT_SEC = 3.0  # Slack shows the user an error after this long


async def test_serve_acknowledges_commands_when_the_web_api_cannot_be_reached(tmp_path: Path) -> None:
    async with world(tmp_path, f"sqlite:///{tmp_path / 'bot.db'}") as w:
        w.env["SLACK_API_URL"] = f"http://127.0.0.1:{free_port()}/api/"  # nothing listens there
        bot = await w.start_bot()
        log = tmp_path / "bot-0.log"
        async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
            early = await driver.slash_command(REQUESTER, "help")  # while the start-up check still retries
            assert early.status == 200, early.body_text
            await until(
                lambda: "cannot be reached" in log.read_text(), "the bot to say Slack is out of reach"
            )
            started = time.monotonic()
            answer = await driver.slash_command(REQUESTER, "run --suite csb_sdlc_fix")
            assert time.monotonic() - started < ACK_LIMIT_SEC
            assert answer.status == 200, answer.body_text
            assert answer.body_text == SLACK_AWAY  # shown to the person who typed the command
            await until(lambda: request_count(w.store), "the request to be kept")
        text = log.read_text()
        assert "Traceback" not in text, text
        unreachable = [line for line in text.splitlines() if "cannot be reached" in line]
        assert len(unreachable) == 1, text
        assert "Slack's Web API at http://127.0.0.1:" in unreachable[0]
        assert w.standin.calls_to("auth.test") == []  # the stand-in was never the one asked
