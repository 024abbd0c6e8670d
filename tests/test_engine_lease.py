"""One process runs the timers (the lease), and a new holder reconciles what the old one left running:
live lanes are found by their marker and re-attached, ended ones are classified, lost ones re-queued.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import engine_kit
from idle import run_until_idle
from lane_waits import running_count, wait_any

from bot.csb.task_copy import copy_path
from bot.domain.outcome import LaneStatus
from bot.engine.lease import LeaseKeeper
from bot.executors.processes import this_host
from bot.store import lanes, lease
from bot.store.lanes import LaneClaim
from bot.store.models import Lease, RunState

pytestmark = pytest.mark.slow


async def test_only_the_lease_holder_acts_until_it_expires(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        first, second = kit.engine, kit.new_engine()
        assert (await first.lease.hold()).fresh
        assert not (await second.lease.hold()).held  # same host, holder alive, not expired
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        taken = await second.lease.hold()
        assert taken.held and taken.fresh
        assert not (await first.lease.hold()).held  # the old holder lost it


async def test_a_dead_holder_on_this_host_loses_the_lease_at_once(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        dead = subprocess.Popen(["true"])
        dead.wait()
        now = kit.clock.now()
        async with kit.store.write() as session:
            session.add(
                Lease(
                    name=lease.ENGINE_LEASE,
                    holder=f"{this_host()}:{dead.pid}:gone",
                    host=this_host(),
                    pid=dead.pid,
                    expires_at=now + timedelta(hours=1),
                    renewed_at=now,
                )
            )
        taken = await kit.engine.lease.hold()
        assert taken.held and taken.fresh


async def test_two_keepers_racing_for_a_free_lease_one_wins(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        keepers = [LeaseKeeper(kit.store, kit.clock, 20, 4) for _ in range(5)]
        results = await asyncio.gather(*(keeper.hold() for keeper in keepers))
        assert sum(result.held for result in results) == 1


async def test_a_new_holder_reconciles_every_running_lane(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, global_slots=6) as kit:
        kit.script({"csv-quoting-debug-001/mcp": "hang"})
        run_id = await kit.approve("csb_sdlc_debug", parallel=4)
        old = kit.engine
        await old.tick()  # pairs 0 and 1 start
        queued = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.QUEUED]
        # Unique, as the engine's markers are: the task copy it names is in the shared tmp folder.
        lost = f"lost.{uuid.uuid4().hex[:16]}"
        async with kit.store.write() as session:  # the old bot died right after claiming pair 2
            for lane in queued:
                assert await lanes.claim_lane(
                    session, lane.id or 0, now=kit.clock.now(), account="x", host=this_host(), marker=lost
                )
        while running_count(old.executor) > 1:  # everything but the hanging lane ends while it is down
            await wait_any(old.executor)

        # The lost MCP lane's task copy, had the old bot made it: not needed by its retry.
        stale = copy_path("mcp", "mcp-remote-direct", "lru-cache-eviction-debug-001", lost)
        (stale / "environment").mkdir(parents=True)
        new = kit.new_engine()
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        await new.tick()
        assert not stale.exists()
        by_key = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}
        hanging = by_key["csv-quoting-debug-001", "mcp"]
        assert hanging.state is LaneStatus.RUNNING
        assert (await new.executor.observe([hanging]))[hanging.id or 0].running  # re-attached
        assert by_key["retry-backoff-debug-001", "baseline"].state is LaneStatus.PASSED  # its result was read
        lost = [by_key["lru-cache-eviction-debug-001", role] for role in ("baseline", "mcp")]
        assert all(lane.attempt == 2 and lane.state is LaneStatus.RUNNING for lane in lost)  # started again

        kit.clock.advance(timedelta(seconds=hanging.timeout_sec))
        await run_until_idle(new, kit.store)  # the attached lane is stopped by its pid, as a timeout
        states = await kit.states(run_id)
        assert states["csv-quoting-debug-001", "mcp"] == "timeout"
        assert (await kit.run(run_id)).state is RunState.FINISHED
        assert len(kit.trial_dirs()) == 6  # every lane ran exactly once


async def test_lanes_of_a_dead_host_are_waited_for_then_retried_as_lost(tmp_path: Path, db_url: str) -> None:
    """A bot on another host claimed a pair and died with it. The new holder cannot see those processes:
    it waits for their result files until the lanes' time limit, then takes them for lost with their
    host (an infrastructure failure) and runs them again here, once."""
    async with engine_kit(tmp_path, url=db_url, retry_backoff_sec=0) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        first_pair = [lane for lane in await kit.lanes(run_id) if lane.pair_index == 0]
        async with kit.store.write() as session:
            claims = [LaneClaim(lane.id or 0, "x", f"gone-{lane.id}") for lane in first_pair]
            assert await lanes.claim_lanes(session, claims, now=kit.clock.now(), host="dead-host") == 2

        await kit.engine.tick()  # reconciled: not this host's to look for; judged by files, none yet
        by_id = {lane.id: lane for lane in await kit.lanes(run_id)}
        assert {by_id[lane.id].state for lane in first_pair} == {LaneStatus.RUNNING}
        assert {by_id[lane.id].host for lane in first_pair} == {"dead-host"}

        kit.clock.advance(timedelta(seconds=max(lane.timeout_sec for lane in first_pair) + 1))
        await run_until_idle(kit.engine, kit.store)
        by_id = {lane.id: lane for lane in await kit.lanes(run_id)}
        for lane in first_pair:
            again = by_id[lane.id]
            assert again.state in (LaneStatus.PASSED, LaneStatus.FAILED), again
            assert (again.attempt, again.infra_failures, again.host) == (2, 1, this_host())
        assert (await kit.run(run_id)).state is RunState.FINISHED
        assert len(kit.trial_dirs()) == len(await kit.lanes(run_id))  # the lost pair ran here, once
