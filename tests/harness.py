"""The bot as Slack sees it: its HTTP app on loopback, the Slack stand-in receiving its Web API calls,
a real SQLite file, and the example bench's Harbor stand-in as real child processes.

No timers run: tests call the engine's and notifier's tick functions, and move an injected clock.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestServer
from idle import run_until_idle
from lane_waits import kill_all, wait_all
from sqlite_template import migrated_sqlite

from bot.domain.clock import ManualClock
from bot.playground import SlackDriver, SlackStandin
from bot.server import build_web_app
from bot.settings import Settings
from bot.slack import create_client
from bot.wiring import Bot, build_bot

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_BENCH = ROOT / "configs" / "example-bench"
HARBOR = EXAMPLE_BENCH / "bin" / "harbor"
TOKEN = "xoxb-test-token"
SECRET = "test-signing-secret"
CHANNEL = "C0PLAY"


# What the example bench ships in runs/official (its README: "Earlier official results").
SHIPPED_OFFICIAL = ("MANIFEST.json", "csb_sdlc_fix_haiku_20251115_090000")


def copy_bench(dest: Path, *, official: bool = False) -> Path:
    """A private copy of the example bench, so runs/ and edits stay in the test's tmp folder; with
    `official`, the earlier official results it ships (only those: not what a playground added)."""
    repo = dest / "csb"
    shutil.copytree(EXAMPLE_BENCH, repo, ignore=shutil.ignore_patterns("runs", "docs"))
    if official:
        for name in SHIPPED_OFFICIAL:
            source, target = EXAMPLE_BENCH / "runs" / "official" / name, repo / "runs" / "official" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copy2(source, target)
    return repo


@dataclass
class Harness:
    bot: Bot
    standin: SlackStandin
    driver: SlackDriver
    clock: ManualClock
    repo: Path

    async def deliver(self) -> None:
        """Finish the listeners' work after their acks, then send what they queued, and what sending
        queued in turn (milestones, the report after them, the DM after the report)."""
        await self.bot.inflight.wait_idle()
        for _ in range(10):
            if not await self.bot.notifier.deliver():
                return

    async def run_lanes(self) -> None:
        """Tick the engine until every lane it can start has finished, delivering after each tick,
        so the card and the thread see the run's intermediate states as people would."""
        await run_until_idle(self.bot.engine, self.bot.store, between=self.deliver, gather=False)

    def cards(self) -> list[dict[str, Any]]:
        return [
            m for m in self.standin.messages(CHANNEL) if not m.get("thread_ts") or m["thread_ts"] == m["ts"]
        ]

    def last_card(self) -> dict[str, Any]:
        cards = self.cards()
        assert cards, "no card was posted"
        return cards[-1]

    def thread(self, card: dict[str, Any]) -> list[dict[str, Any]]:
        return [m for m in self.standin.thread(CHANNEL, card["ts"]) if m["ts"] != card["ts"]]

    def ephemeral_texts(self, user: str | None = None) -> list[str]:
        return [str(e.get("text", "")) for e in self.standin.ephemerals(user)]


# Tests see every card edit: pacing is tested on its own, with the clock moved by hand.
UNPACED = """
[notifier]
card_update_seconds = 0
post_interval_seconds = 0
"""


def write_config(tmp_path: Path, text: str = "") -> Path:
    """The bot's TOML for a test: unpaced card edits plus whatever policy or engine knobs it sets."""
    path = tmp_path / "csb-bot.toml"
    path.write_text(text if "[notifier]" in text else UNPACED + text)
    return path


def make_settings(tmp_path: Path, repo: Path, slack_api_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": TOKEN,
        "slack_signing_secret": SECRET,
        "slack_api_url": slack_api_url,
        "csb_repo": repo,
        "csb_database_url": None,
        "csb_config": write_config(tmp_path, overrides.pop("config_text", "")),
        "csb_harbor": str(HARBOR),
    }
    values.update(overrides)
    if values["csb_database_url"] is None:
        values["csb_database_url"] = migrated_sqlite(tmp_path / "bot.db")
    return Settings(**values)


@asynccontextmanager
async def running_bot(tmp_path: Path, **overrides: Any) -> AsyncIterator[Harness]:
    repo = overrides.pop("repo", None) or copy_bench(tmp_path)
    standin = SlackStandin(bot_token=TOKEN)
    slack_server = TestServer(standin.build_app(), host="127.0.0.1")
    await slack_server.start_server()
    slack_url = str(slack_server.make_url("")).rstrip("/")
    standin.base_url = slack_url
    clock = ManualClock()
    slack_timeout = overrides.pop("slack_timeout", None)  # seconds a Web API call may take
    settings = make_settings(tmp_path, repo, f"{slack_url}/api/", **overrides)
    # `environ`: more of the bot's environment (say a HOME holding account homes and CSB's usage cache).
    environ = {
        **os.environ,
        "SOURCEGRAPH_ACCESS_TOKEN": "sgp_test_not_a_real_token",
        **overrides.pop("environ", {}),
    }
    client = create_client(settings, slack_timeout) if slack_timeout else None
    bot = build_bot(settings, clock=clock, client=client, environ=environ, eager_notifier=False)
    bot_server = TestServer(build_web_app(bot, timers=False), host="127.0.0.1")
    await bot_server.start_server()
    bot_url = str(bot_server.make_url("/slack/events"))
    await bot.engine.tick()  # takes the lease, as a started bot does: it gates delivery and expiry
    try:
        async with SlackDriver(bot_url, SECRET, standin, slack_url) as driver:
            yield Harness(bot=bot, standin=standin, driver=driver, clock=clock, repo=repo)
    except BaseException:
        await kill_all(bot.engine, bot.store)  # a failed test must not wait for lanes that hang
        raise
    finally:
        await wait_all(bot.engine.executor)
        await bot_server.close()
        await slack_server.close()
