"""The guards of drains, Stop and retry and stall notes hold when two writers race, each race driven on
purpose (`interleave`): without the guard named in each test, the late writer would act a second time.

- a drain, `accounts.drain` `WHERE drained_at IS NULL`: `test_two_drains_of_one_account_drain_it_once`.
- Stop and retry, `lanes.want_stop` `WHERE stop_wanted IS NULL AND stop_sent_at IS NULL`:
  `test_two_clicks_of_stop_and_retry_stop_the_lane_once`.
- a stall note, `lanes.note_stall` `WHERE stall_noted IS DISTINCT FROM attempt`:
  `test_two_looks_at_one_stalled_lane_tell_the_thread_once`.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import engine_kit
from interleave import before_write_after_read, overlapping_writes
from sqlalchemy import select

from bot.domain.errors import UserInputError
from bot.domain.outcome import LaneStatus
from bot.domain.policy import Actor, PolicyConfig
from bot.engine.stall_watch import StallWatch
from bot.services.lane_restart import LaneRestartService
from bot.store import accounts, audit, lanes
from bot.store.models import OutboxItem


async def test_two_drains_of_one_account_drain_it_once(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True) as kit:
        home = "/home/csb/.claude-homes/account1"
        async with kit.store.write() as session:
            await accounts.ensure_accounts(session, [home])
        now = kit.clock.now()
        first, second = await overlapping_writes(
            kit.store,
            lambda session: accounts.drain(session, home, "U1", now),
            lambda session: accounts.drain(session, home, "U2", now),
        )
        assert (first, second) == (True, False)
        async with kit.store.read() as session:
            (account,) = await accounts.all_accounts(session)
        assert account.drained_by == "U1"


async def test_two_clicks_of_stop_and_retry_stop_the_lane_once(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        lane = next(lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING)
        service = LaneRestartService(kit.store, PolicyConfig(), kit.clock)
        other = service.stop_and_retry(lane.id, Actor(user_id="U0BOB"))
        with (
            before_write_after_read(kit.store, lambda: other) as window,
            pytest.raises(UserInputError, match="already being stopped"),
        ):
            await service.stop_and_retry(lane.id, Actor(user_id="U0ALICE"))
        assert window.opened
        async with kit.store.read() as session:
            trail = [event.actor for event in await audit.events_for(session, run_id)]
            asked = await lanes.get_lane(session, lane.id)
        assert trail.count("U0BOB") == 1 and "U0ALICE" not in trail
        assert asked is not None and asked.stop_wanted == "stall"


async def test_two_looks_at_one_stalled_lane_tell_the_thread_once(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        kit.clock.advance(timedelta(seconds=kit.config.stall_after_sec + 1))
        now = kit.clock.now()
        # Two engines' watchdogs (say, one that lost the lease mid-tick) look at the same lanes.
        first, second = (StallWatch(kit.store, kit.repo, kit.config) for _ in range(2))
        async with kit.store.read() as session:
            running = await lanes.running_lanes(session)
        live = [(lane, tmp_path / "no-such.log") for lane in running]  # no file changed since the start
        later = now + timedelta(
            seconds=1
        )  # a note of its own, were it written: the outbox would not merge it
        with before_write_after_read(kit.store, lambda: second.look(live, later)) as window:
            async with kit.store.read() as session:
                await lanes.running_lanes(session)
            await first.look(live, now)
        assert window.opened
        async with kit.store.read() as session:
            targets = list((await session.execute(select(OutboxItem.target))).scalars())
        assert len(running) == 2
        assert sorted(t for t in targets if ":stall-" in t) == sorted({t for t in targets if ":stall-" in t})
        assert sum(":stall-" in t for t in targets) == len(running)  # one note per lane, not two
        assert run_id == 1
