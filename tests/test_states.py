"""The state machines of requests, runs and lanes (`bot/domain/states.py`) are what the store's guarded
updates enforce: every move the table allows is made, every other is refused before it reaches the database,
and the groups the code asks about agree with the moves it makes from them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.outcome import TrialOutcome
from bot.domain.states import (
    ACTIVE_RUN_STATES,
    CANCELLABLE_RUN_STATES,
    COMPLETED_LANE_STATES,
    FINAL_RUN_STATES,
    LANE_TRANSITIONS,
    REQUEST_TRANSITIONS,
    RERUNNABLE_LANE_STATES,
    RUN_TRANSITIONS,
    SCORED_LANE_STATES,
    STARTABLE_RUN_STATES,
    STOPPING_RUN_STATES,
    UNDER_WAY_RUN_STATES,
    UNFINISHED_LANE_STATES,
    UNSCORED_LANE_STATES,
    UNSTOPPED_RUN_STATES,
    LaneStatus,
    RequestState,
    RunState,
    check_lane_move,
)
from bot.store import lanes, requests, runs
from bot.store.db import Store
from bot.store.models import Lane, Run, RunRequest
from bot.store.records import NewLane, NewRun

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def store_with_a_run(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'states.db'}")
    await store.create_tables()
    async with store.write() as session:
        session.add(
            RunRequest(id=1, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=NOW)
        )
        await session.flush()
        lane = NewLane(
            pair_index=0,
            task_id="t1",
            suite="s",
            task_path="benchmarks/tasks/s/t1",
            role="baseline",
            config="baseline-local-direct",
            mcp_type="none",
            timeout_sec=60,
            jobs_dir="j",
            log_path="l",
        )
        await runs.create_run(
            session, NewRun(request_id=1, run_dir="r", model="m", parallel=1, created_at=NOW), [lane]
        )
    return store


async def test_the_store_makes_every_move_the_table_allows_and_no_other(tmp_path: Path) -> None:
    store = await store_with_a_run(tmp_path)
    for start in RunState:
        for to in RunState:
            async with store.write() as session:
                await session.execute(update(Run).where(Run.id == 1).values(state=start))
            if to in RUN_TRANSITIONS[start]:
                async with store.write() as session:
                    assert await runs.move_run(session, 1, from_states=[start], to=to)
                async with store.read() as session:
                    assert (await runs.get_run(session, 1)).state is to  # type: ignore[union-attr]
            else:
                with pytest.raises(ValueError, match="never moves"):
                    async with store.write() as session:
                        await runs.move_run(session, 1, from_states=[start], to=to)
                async with store.read() as session:
                    assert (await runs.get_run(session, 1)).state is start  # type: ignore[union-attr]
    await store.close()


async def test_a_request_is_decided_only_as_the_table_allows(tmp_path: Path) -> None:
    store = await store_with_a_run(tmp_path)
    assert REQUEST_TRANSITIONS[RequestState.PENDING] == {
        RequestState.APPROVED,
        RequestState.REJECTED,
        RequestState.EXPIRED,
    }
    with pytest.raises(ValueError, match="never moves"):
        async with store.write() as session:
            await requests.decide(session, 1, to=RequestState.PENDING, actor="U2", now=NOW, revision=1)
    async with store.write() as session:
        assert await requests.decide(session, 1, to=RequestState.EXPIRED, actor="U2", now=NOW, revision=1)
        assert not await requests.decide(
            session, 1, to=RequestState.APPROVED, actor="U2", now=NOW, revision=1
        )
    await store.close()


def test_the_groups_agree_with_the_moves_made_from_them() -> None:
    assert all(RunState.DRAINING in RUN_TRANSITIONS[s] for s in UNSTOPPED_RUN_STATES)  # drain
    assert all(RunState.CANCELLING in RUN_TRANSITIONS[s] for s in CANCELLABLE_RUN_STATES)  # cancel
    assert all(RunState.CANCELLED in RUN_TRANSITIONS[s] for s in STOPPING_RUN_STATES)  # closed as stopped
    assert all(RunState.FINISHED in RUN_TRANSITIONS[s] for s in UNDER_WAY_RUN_STATES)  # closed as finished
    assert set(STARTABLE_RUN_STATES) <= set(ACTIVE_RUN_STATES)
    assert set(ACTIVE_RUN_STATES) | set(FINAL_RUN_STATES) == set(RunState)
    assert not set(ACTIVE_RUN_STATES) & set(FINAL_RUN_STATES)
    for state in RunState:
        assert state.is_final == (not RUN_TRANSITIONS[state])  # only an end has no way out


def test_every_state_is_reached_from_queued() -> None:
    reached, frontier = {RunState.QUEUED}, [RunState.QUEUED]
    while frontier:
        for to in RUN_TRANSITIONS[frontier.pop()] - reached:
            reached.add(to)
            frontier.append(to)
    assert reached == set(RunState)


LaneMove = Callable[[AsyncSession, int], Awaitable[bool]]


def _finish(to: LaneStatus) -> LaneMove:
    async def move(session: AsyncSession, lane_id: int) -> bool:
        end = lanes.LaneEnd(lane_id, TrialOutcome(status=to), exit_code=0)
        return lane_id in await lanes.finish_lanes(session, [end], now=NOW)

    return move


async def _claim(session: AsyncSession, lane_id: int) -> bool:
    return await lanes.claim_lane(session, lane_id, now=NOW, account="a", host="h", marker="m")


async def _requeue(session: AsyncSession, lane_id: int) -> bool:
    return await lanes.requeue_lane(session, lane_id, not_before=None, reason="retry", infra=True)


async def _cancel_queued(session: AsyncSession, lane_id: int) -> bool:
    return await lanes.cancel_queued_lanes(session, 1, NOW, "cancelled") == 1


# The store's one way to make each lane move.
LANE_MOVES: dict[tuple[LaneStatus, LaneStatus], LaneMove] = {
    (LaneStatus.QUEUED, LaneStatus.RUNNING): _claim,
    (LaneStatus.QUEUED, LaneStatus.CANCELLED): _cancel_queued,
    (LaneStatus.RUNNING, LaneStatus.QUEUED): _requeue,
    **{(LaneStatus.RUNNING, to): _finish(to) for to in (*COMPLETED_LANE_STATES, LaneStatus.CANCELLED)},
}


async def _lane_state(store: Store) -> LaneStatus:
    async with store.read() as session:
        return (await runs.run_lanes(session, 1))[0].state


async def test_the_store_makes_every_lane_move_the_table_allows_from_that_state_only(tmp_path: Path) -> None:
    """Each move the table allows has its guarded update, and that update moves a lane only from the state
    it leaves (the guard), whatever state the lane is in."""
    assert set(LANE_MOVES) == {(start, to) for start, ends in LANE_TRANSITIONS.items() for to in ends}
    store = await store_with_a_run(tmp_path)
    for (leaves, to), move in LANE_MOVES.items():
        for start in LaneStatus:
            async with store.write() as session:
                await session.execute(update(Lane).where(Lane.id == 1).values(state=start))
            async with store.write() as session:
                assert await move(session, 1) == (start is leaves), (start, leaves, to)
            assert await _lane_state(store) is (to if start is leaves else start)
    await store.close()


async def test_a_lane_move_the_table_does_not_allow_is_refused_before_the_database(tmp_path: Path) -> None:
    for start in LaneStatus:
        for to in set(LaneStatus) - LANE_TRANSITIONS[start]:
            with pytest.raises(ValueError, match="a lane never moves"):
                check_lane_move(start, to)
    store = await store_with_a_run(tmp_path)
    async with store.write() as session:
        await session.execute(update(Lane).where(Lane.id == 1).values(state=LaneStatus.RUNNING))
    for to in UNFINISHED_LANE_STATES:  # an ending that is no end
        with pytest.raises(ValueError, match=f"a lane never (moves from running to|ends) {to}"):
            async with store.write() as session:
                await _finish(to)(session, 1)
        assert await _lane_state(store) is LaneStatus.RUNNING
    await store.close()


def test_the_lane_groups_agree_with_the_moves_made_from_them() -> None:
    for state in LaneStatus:
        assert state.is_final == (not LANE_TRANSITIONS[state])  # only an end has no way out
    assert set(UNFINISHED_LANE_STATES) | set(COMPLETED_LANE_STATES) | {LaneStatus.CANCELLED} == set(
        LaneStatus
    )
    assert set(COMPLETED_LANE_STATES) == set(SCORED_LANE_STATES) | set(UNSCORED_LANE_STATES)
    assert not set(SCORED_LANE_STATES) & set(UNSCORED_LANE_STATES)
    assert set(RERUNNABLE_LANE_STATES) == set(COMPLETED_LANE_STATES) - {LaneStatus.PASSED}
    assert set(COMPLETED_LANE_STATES) < LANE_TRANSITIONS[LaneStatus.RUNNING]  # a lane ends only from running
