"""Claiming, without running anything: the engine hands lanes to the tests' `FakeExecutor`, which
records each launch (its command and environment) and runs nothing, so these tests see the claim
algorithm alone (pairs whole, a run's `parallel`, accounts round robin, a pause while the executor is
away, a refused start) in one tick each. Lanes that run to their end are tests/test_engine_queue.py's.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from engine_kit import engine_kit, make_accounts

from bot.domain.outcome import LaneStatus
from bot.engine.accounts import account_pool
from bot.store.models import RunState


async def test_a_pair_starts_whole_or_not_at_all(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True, global_slots=3) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=4)
        await kit.engine.tick()
        lanes = await kit.lanes(run_id)
        running = [lane for lane in lanes if lane.state is LaneStatus.RUNNING]
        assert len(running) == 2  # a third slot is free, but half a pair never starts
        assert len({lane.pair_index for lane in running}) == 1
        assert running[0].started_at == running[1].started_at
        assert sorted(kit.fake.running()) == sorted(lane.id for lane in running)


async def test_a_run_keeps_to_its_parallel(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True, global_slots=10) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=3)  # odd: one slot idle
        await kit.engine.tick()
        assert sum(1 for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING) == 2
        assert len(kit.fake.launches) == 2


async def test_accounts_round_robin_by_home(tmp_path: Path, db_url: str) -> None:
    homes = make_accounts(tmp_path, "account1", "account2", "account3")
    async with engine_kit(tmp_path, url=db_url, fake=True, sessions_per_account=2) as kit:
        pool = account_pool(kit.config, kit.env["HOME"])
        assert pool.slots == 6 and len(pool.homes) == 3
        run_id = await kit.approve("csb_sdlc_debug", parallel=6)
        await kit.engine.tick()
        lanes = await kit.lanes(run_id)
        used = Counter(lane.account for lane in lanes)
        assert used == {str(homes / f"account{n}"): 2 for n in (1, 2, 3)}
        for pair in (0, 1, 2):
            pair_lanes = [lane for lane in lanes if lane.pair_index == pair]
            assert pair_lanes[0].account != pair_lanes[1].account
        # each lane's command runs with its account as HOME
        assert {lane.id: lane.account for lane in lanes} == {
            lane_id: launch.env["HOME"] for lane_id, launch in kit.fake.launches.items()
        }


async def test_nothing_is_claimed_while_the_executor_is_away_and_lanes_start_once_it_answers(
    tmp_path: Path, db_url: str
) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True) as kit:
        kit.fake.away = "the cluster's head does not answer"
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        assert {lane.state for lane in await kit.lanes(run_id)} == {LaneStatus.QUEUED}
        assert kit.fake.launches == {}
        kit.fake.away = None
        await kit.engine.tick()
        assert sum(1 for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING) == 2
        assert len(kit.fake.launches) == 2


async def test_a_start_the_executor_refuses_is_an_infrastructure_failure_tried_again(
    tmp_path: Path, db_url: str
) -> None:
    async with engine_kit(tmp_path, url=db_url, fake=True) as kit:
        kit.fake.refuse = "cannot start harbor (harbor): No such file or directory"
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        lanes = await kit.lanes(run_id)
        assert {(lane.state, lane.attempt) for lane in lanes} == {(LaneStatus.QUEUED, 1)}
        assert all(lane.not_before is not None for lane in lanes)  # backed off, not spinning
        # The MCP lanes ran from task copies (the Dockerfile variant swapped in); none is left behind.
        paths = [Path(launch.argv[launch.argv.index("--path") + 1]) for launch in kit.fake.refused]
        copies = [path for path in paths if path.name.startswith("mcp_")]
        assert len(paths) == 2 and len(copies) == 1
        assert not copies[0].exists()
        assert (await kit.run(run_id)).state is RunState.RUNNING
        kit.fake.refuse = None
        kit.clock.advance(timedelta(seconds=kit.config.retry_backoff_sec + 1))
        await kit.engine.tick()
        lanes = await kit.lanes(run_id)
        assert {(lane.state, lane.attempt) for lane in lanes} == {(LaneStatus.RUNNING, 2)}
        assert sorted(kit.fake.running()) == sorted(lane.id for lane in lanes)
