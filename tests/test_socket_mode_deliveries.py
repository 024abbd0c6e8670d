"""A request Socket Mode delivers twice is acted on once: what identifies a delivery, and two processes
on one database agreeing on which of them saw it first."""

from __future__ import annotations

from pathlib import Path

from bot.domain.clock import ManualClock
from bot.services.replays import ReplayGuard
from bot.slack.inbound.listeners.prologue import delivery_id
from bot.store.db import Store


def test_a_delivery_is_known_by_its_event_id_else_its_trigger_id() -> None:
    assert delivery_id({"type": "event_callback", "event_id": "Ev1", "event": {}}) == "Ev1"
    assert delivery_id({"command": "/csb", "trigger_id": "1.T.abc"}) == "1.T.abc"
    assert delivery_id({"type": "block_actions", "trigger_id": "2.T.abc", "actions": []}) == "2.T.abc"
    assert delivery_id({"type": "view_closed", "view": {}}) is None  # nothing to tell: always acted on
    assert delivery_id({"trigger_id": ""}) is None


async def test_two_processes_agree_on_the_first_delivery(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    one, two = Store(url), Store(url)
    await one.create_tables()
    clock = ManualClock()
    try:
        first, second = ReplayGuard(one, clock), ReplayGuard(two, clock)
        assert await first.first_delivery("1.T0PLAY.playground")
        assert not await second.first_delivery("1.T0PLAY.playground")
        assert not await first.first_delivery("1.T0PLAY.playground")
        assert await second.first_delivery("2.T0PLAY.playground")
        # A click's replay key and a delivery id never collide, even when the strings match.
        assert await first.first_time("U0ALICE", "approval.approve", "1.T0PLAY.playground")
    finally:
        await one.close()
        await two.close()
