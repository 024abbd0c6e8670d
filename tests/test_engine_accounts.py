"""Which accounts new lanes take: not one CSB's usage cache shows too busy, not a drained one; when none
may, lanes wait and the run's thread says why. The tests' `FakeExecutor` runs nothing, so each claim
is seen in one tick; the drain's service is driven as `/csb drain-account` drives it."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from engine_kit import EngineKit, engine_kit, make_accounts
from sqlalchemy import select

from bot.domain import events
from bot.domain.outcome import LaneStatus
from bot.store.models import OutboxItem


def write_usage(kit: EngineKit, utilisation: dict[str, float], fetched_at: datetime | None = None) -> None:
    """CSB's usage cache under the kit's HOME, in fetch_usage.py's shape."""
    at = (fetched_at or kit.clock.now()).isoformat()
    entries = [
        {
            "name": name,
            "five_hour": {"utilization": used, "resets_at": None},
            "seven_day": {"utilization": 10.0, "resets_at": None},
            "fetched_at": at,
            "error": None,
        }
        for name, used in utilisation.items()
    ]
    path = Path(kit.env["HOME"]) / ".claude-usage" / "usage_cache.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"accounts": entries, "fetched_at": at}))


async def running(kit: EngineKit, run_id: int) -> int:
    return sum(1 for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING)


async def notes(kit: EngineKit, run_id: int, kind: str) -> list[events.Event]:
    async with kit.store.read() as session:
        rows = await session.execute(select(OutboxItem.text).where(OutboxItem.run_id == run_id))
    found = [events.load(text) for text in rows.scalars() if text]
    return [event for event in found if event is not None and event.kind == kind]


async def test_new_lanes_avoid_an_account_the_usage_cache_shows_too_busy(tmp_path: Path, db_url: str) -> None:
    homes = make_accounts(tmp_path, "account1", "account2")
    async with engine_kit(tmp_path, url=db_url, fake=True, max_utilization=90) as kit:
        write_usage(kit, {"account1": 97.0, "account2": 20.0})
        run_id = await kit.approve("csb_sdlc_debug", parallel=4)
        await kit.engine.tick()
        used = Counter(lane.account for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING)
        assert used == {str(homes / "account2"): 4}


async def test_when_every_account_is_too_busy_lanes_wait_and_the_thread_says_why(
    tmp_path: Path, db_url: str
) -> None:
    make_accounts(tmp_path, "account1", "account2")
    async with engine_kit(tmp_path, url=db_url, fake=True, max_utilization=90) as kit:
        write_usage(kit, {"account1": 97.0, "account2": 95.5})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        await kit.engine.tick()
        assert {lane.state for lane in await kit.lanes(run_id)} == {LaneStatus.QUEUED}
        (held,) = await notes(kit, run_id, "accounts_held")  # told once, not every tick
        assert isinstance(held, events.AccountsHeld)
        assert [(a.name, a.why, a.detail) for a in held.accounts] == [
            ("account1", "utilisation", "97.0% 5-hour, 10.0% 7-day"),
            ("account2", "utilisation", "95.5% 5-hour, 10.0% 7-day"),
        ]
        write_usage(kit, {"account1": 97.0, "account2": 40.0})
        await kit.engine.tick()
        assert await running(kit, run_id) == 2
        assert len(await notes(kit, run_id, "accounts_free")) == 1


async def test_a_stale_or_broken_cache_holds_no_account_back(tmp_path: Path, db_url: str) -> None:
    make_accounts(tmp_path, "account1")
    async with engine_kit(tmp_path, url=db_url, fake=True, max_utilization=90, usage_stale_sec=600) as kit:
        write_usage(kit, {"account1": 99.0}, fetched_at=kit.clock.now() - timedelta(minutes=11))
        stale = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        assert await running(kit, stale) == 2
        path = Path(kit.env["HOME"]) / ".claude-usage" / "usage_cache.json"
        path.write_text("{not json")
        broken = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        assert await running(kit, broken) == 2
