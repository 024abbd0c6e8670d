"""The rule that a run's id is its request's id (`runs.run_id_of`): the run planned at approval gets it,
and a run cannot be given any other, so the places that rely on the rule can trust it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.domain.spec import LanePlan, LaneRole, RunParams, RunSpec, TaskRef
from bot.services.run_plan import plan_run
from bot.store import runs
from bot.store.db import Store
from bot.store.models import RunRequest
from bot.store.records import NewRun

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def open_store(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    await store.create_tables()
    return store


async def add_requests(store: Store, count: int) -> list[int]:
    async with store.write() as session:
        added = [
            RunRequest(spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=NOW)
            for _ in range(count)
        ]
        session.add_all(added)
        await session.flush()
        return [request.id or 0 for request in added]


def test_the_rule_maps_each_id_to_the_same_number_both_ways() -> None:
    for request_id in (1, 7, 10_000):
        assert runs.run_id_of(request_id) == request_id
        assert runs.request_id_of(runs.run_id_of(request_id)) == request_id


async def test_the_run_planned_at_approval_has_its_requests_id(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    *_, request_id = await add_requests(store, 3)  # ids 1..3; the run table is empty, so its own counter is 1
    spec = RunSpec(
        params=RunParams(suite="s"),
        task_file="benchmarks/suites/s.json",
        task_file_sha256="0" * 64,
        tasks=(TaskRef(task_id="t1", suite="s", path="benchmarks/tasks/s/t1"),),
        lanes=(
            LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none"),
            LanePlan(role=LaneRole.MCP, config="mcp-remote-direct", mcp_type="sourcegraph_full"),
        ),
        parallel=2,
    )
    run, lanes = plan_run(spec, request_id, NOW, timeout_multiplier=1, default_timeout_sec=60)
    async with store.write() as session:
        created = await runs.create_run(session, run, lanes)
    assert created.id == runs.run_id_of(request_id) == request_id
    async with store.read() as session:
        assert [lane.run_id for lane in await runs.run_lanes(session, request_id)] == [request_id] * 2
    await store.close()


async def test_a_new_run_takes_its_requests_id(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    *_, request_id = await add_requests(store, 2)
    async with store.write() as session:
        run = NewRun(request_id=request_id, run_dir="r", model="m", parallel=1, created_at=NOW)
        assert (await runs.create_run(session, run, [])).id == request_id
    await store.close()


def test_a_new_run_cannot_be_given_another_id() -> None:
    """The store is handed no id to check: the rule is kept by what a new run is made of."""
    with pytest.raises(TypeError, match="id"):
        NewRun(id=1, request_id=2, run_dir="r", model="m", parallel=1, created_at=NOW)  # type: ignore[call-arg]
