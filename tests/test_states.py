"""The state machine of requests and runs (`bot/domain/states.py`) is what the store's guarded updates
enforce: every move the table allows is made, every other is refused before it reaches the database,
and the groups the code asks about agree with the moves it makes from them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from bot.domain.states import (
    ACTIVE_RUN_STATES,
    CANCELLABLE_RUN_STATES,
    FINAL_RUN_STATES,
    REQUEST_TRANSITIONS,
    RUN_TRANSITIONS,
    STARTABLE_RUN_STATES,
    STOPPING_RUN_STATES,
    UNDER_WAY_RUN_STATES,
    UNSTOPPED_RUN_STATES,
    RequestState,
    RunState,
)
from bot.store import requests, runs
from bot.store.db import Store
from bot.store.models import Run, RunRequest

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def store_with_a_run(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'states.db'}")
    await store.create_tables()
    async with store.write() as session:
        session.add(
            RunRequest(id=1, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=NOW)
        )
        await session.flush()
        await runs.create_run(
            session, Run(request_id=1, run_dir="r", model="m", parallel=1, created_at=NOW), []
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
