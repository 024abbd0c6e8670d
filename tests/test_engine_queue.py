"""Queue and slots, with lanes that run to their end: official before staging, first come first served,
a global pool shared by all runs; ETAs from past lanes. Claiming alone (pairs whole, a run's
`parallel`, accounts round robin) is tests/test_engine_claims.py's, on the tests' fake executor.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import EngineKit, engine_kit
from idle import run_until_idle
from lane_waits import wait_all
from sqlalchemy import update

from bot.domain.outcome import LaneStatus
from bot.engine.accounts import AccountPicker, account_pool
from bot.settings import EngineConfig
from bot.store import lanes, queue, runs
from bot.store.models import Account, Run, RunState

pytestmark = pytest.mark.slow


def running_by_run(lanes_by_run: dict[int, list]) -> dict[int, int]:
    return {
        run_id: sum(1 for lane in lanes if lane.state is LaneStatus.RUNNING)
        for run_id, lanes in lanes_by_run.items()
    }


async def test_official_first_then_first_come_within_the_global_pool(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, global_slots=4) as kit:
        first = await kit.approve("csb_sdlc_fix", parallel=2)
        second = await kit.approve("csb_sdlc_debug", parallel=4)
        kit.clock.advance(timedelta(seconds=1))
        official = await kit.approve("csb_org_onboarding", parallel=2, category="official")
        async with kit.store.read() as session:
            assert await queue.queue_position(session, official) == 1
            assert await queue.queue_position(session, first) == 2
            assert await queue.queue_position(session, second) == 3

        await kit.engine.tick()
        running = {rid: (await kit.lanes(rid)) for rid in (first, second, official)}
        # official's pair, then the oldest staging run's pair: the pool of 4 is full, the newer run waits
        assert running_by_run(running) == {first: 2, second: 0, official: 2}
        assert (await kit.run(second)).state is RunState.QUEUED
        async with kit.store.read() as session:
            assert await queue.queue_position(session, second) == 1
            assert await queue.queue_position(session, first) is None

        await run_until_idle(kit.engine, kit.store)
        for run_id in (first, second, official):
            assert (await kit.run(run_id)).state is RunState.FINISHED
            assert all(lane.attempt == 1 for lane in await kit.lanes(run_id))
        assert len(kit.trial_dirs()) == 2 * (3 + 3 + 1)  # every lane started exactly once


def test_slot_pool_defaults() -> None:
    config = EngineConfig(default_parallel=6)
    assert account_pool(config, "/nonexistent-home").slots == 6
    assert account_pool(config.model_copy(update={"global_slots": 12}), "/nonexistent-home").slots == 12


def test_picker_avoids_the_failed_account_and_full_ones() -> None:
    ready = [Account(home="a", turn=1), Account(home="b", turn=2), Account(home="c", turn=3)]
    picker = AccountPicker(ready, {"c": 1}, per_account=1)
    assert picker.pick(1, ["a"]) == ["b"]  # a is next in turn, but the retry failed there
    assert picker.pick(2, [None, None]) is None  # only a has room: a pair never gets half its accounts
    assert picker.pick(1, [None]) == ["a"]
    assert picker.changed == {"b": 4, "a": 5}


async def _a_finished_run_of_100_s_lanes(kit: EngineKit) -> int:
    """The ETA's history: a csb_org_onboarding run whose lanes each took 100 s, finished."""
    done = await kit.approve("csb_org_onboarding", parallel=2)
    await kit.engine.tick()
    kit.clock.advance(timedelta(seconds=100))
    await wait_all(kit.engine.executor)
    await kit.engine.tick()
    assert (await kit.run(done)).state is RunState.FINISHED
    return done


async def test_eta_from_past_lane_durations(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, global_slots=2) as kit:
        await _a_finished_run_of_100_s_lanes(kit)
        waiting = await kit.approve("csb_sdlc_fix", parallel=2)
        waiting_run = await kit.run(waiting)
        async with kit.store.read() as session:  # no lane of its suite ended yet: its model's lanes count
            assert await queue.mean_lane_seconds(session, waiting_run) == pytest.approx(100)
            figures = await queue.queue_figures(session, waiting)
            assert figures.position == 1 and figures.start_eta_sec == 0
            assert figures.finish_eta_sec == pytest.approx(6 * 100 / 2)
            assert await lanes.count_running(session) == 0


async def test_eta_only_from_comparable_lanes_same_suite_else_same_model(tmp_path: Path, db_url: str) -> None:
    """Lanes of another suite and another model say nothing about this run: its ETA is unknown."""
    async with engine_kit(tmp_path, url=db_url, global_slots=2) as kit:
        await _a_finished_run_of_100_s_lanes(kit)
        stranger = await kit.approve("csb_sdlc_fix")
        same_suite = await kit.approve("csb_org_onboarding")
        same_model = await kit.approve("csb_sdlc_fix")
        async with kit.store.write() as session:
            await session.execute(
                update(Run).where(Run.id.in_([stranger, same_suite])).values(model="openai/gpt-5")
            )
        async with kit.store.read() as session:
            assert (await queue.queue_figures(session, stranger)).finish_eta_sec is None
            for run_id in (same_suite, same_model):
                figures = await queue.queue_figures(session, run_id)
                assert figures.finish_eta_sec is not None and figures.finish_eta_sec > 0


async def test_figures_of_several_runs_are_each_runs_own(tmp_path: Path, db_url: str) -> None:
    """`/csb status` reads every active run's figures at once (`queue_figures_of`, what they share read
    once): a run under way, two waiting in the queue (one of a suite and model with no history), a finished
    one, each with the figures `queue_figures` gives it alone; and their lanes counted as the rows say."""
    async with engine_kit(tmp_path, url=db_url, global_slots=2) as kit:
        done = await _a_finished_run_of_100_s_lanes(kit)
        under_way = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        waiting = await kit.approve("csb_org_onboarding", parallel=1)
        stranger = await kit.approve("csb_sdlc_fix")
        async with kit.store.write() as session:
            await session.execute(update(Run).where(Run.id == stranger).values(model="openai/gpt-5"))
        ids = [done, under_way, waiting, stranger]
        async with kit.store.read() as session:
            every = [await kit.run(run_id) for run_id in ids]
            together = await queue.queue_figures_of(session, every)
            alone = {run_id: await queue.queue_figures(session, run_id) for run_id in ids}
            counted = await runs.lane_counts(session, ids)
        assert together == alone
        assert together[done].eta_sec is None and together[stranger].eta_sec is None
        assert together[waiting].position == 1 and together[stranger].position == 2
        assert together[under_way].eta_sec and together[waiting].eta_sec
        for run_id in ids:
            rows = await kit.lanes(run_id)
            assert counted[run_id].lanes == len(rows) > 0
            assert counted[run_id].done == sum(1 for lane in rows if lane.state.is_final)
            assert counted[run_id].running == sum(1 for lane in rows if lane.state is LaneStatus.RUNNING)
            assert counted[run_id].suites == tuple(sorted({lane.suite for lane in rows}))
        assert counted[under_way].running == 2 and counted[done].done == counted[done].lanes
