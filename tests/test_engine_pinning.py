"""Launch-time pinning: a queued run's spec is resolved again before its first lane, and a drifted one
is voided (never started), while runs already under way and unreadable checkouts are left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from csb_tree import build_tree
from engine_kit import EngineKit, engine_kit
from idle import run_until_idle
from lane_waits import running_count
from summary_check import assert_summary_true

from bot.csb.catalog import Catalog
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LanePlan, LaneRole, RunParams
from bot.engine.pinning import describe_drift
from bot.slack.views.events import stored_text
from bot.store import audit, outbox
from bot.store.models import OutboxKind, RunState

SUITE_FILE = "benchmarks/suites/csb-example.json"


def drop_first_task(kit: EngineKit, suite: str) -> None:
    path = kit.repo / SUITE_FILE
    data = json.loads(path.read_text())
    first = next(i for i, task in enumerate(data["tasks"]) if task["suite"] == suite)
    del data["tasks"][first]
    path.write_text(json.dumps(data, indent=2))


async def audit_rows(kit: EngineKit, run_id: int) -> list[tuple[str, str | None]]:
    request_id = (await kit.run(run_id)).request_id
    async with kit.store.read() as session:
        events = await audit.events_for(session, request_id)
    return [(event.action, event.reason) for event in events if event.run_id == run_id]


def test_describe_drift_names_what_changed(tmp_path: Path) -> None:
    catalog = Catalog(build_tree(tmp_path))
    approved = catalog.resolve(RunParams(), default_parallel=4)
    fewer = approved.model_copy(update={"tasks": approved.tasks[1:], "task_file_sha256": "0" * 64})
    assert describe_drift(approved, fewer) == (
        f"spec drift: `{approved.task_file}` changed; 0 tasks added and 1 removed"
    )
    one_more = fewer.model_copy(update={"tasks": approved.tasks, "task_file_sha256": "1" * 64})
    assert describe_drift(fewer, one_more).endswith("; 1 task added and 0 removed")
    other_lanes = approved.model_copy(
        update={"lanes": (LanePlan(role=LaneRole.MCP, config="mcp-remote-artifact", mcp_type="artifact"),)}
    )
    assert describe_drift(approved, other_lanes) == "spec drift: the lane configs changed"
    moved = approved.model_copy(update={"task_file": "configs/selected_benchmark_tasks.json"})
    assert "the default task file is now `configs/selected_benchmark_tasks.json`" in describe_drift(
        approved, moved
    )


@pytest.mark.slow
async def test_run_waiting_for_slots_is_voided_when_its_suite_changes(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, global_slots=2) as kit:
        first = await kit.approve("csb_sdlc_fix", parallel=2)
        waiting = await kit.approve("csb_sdlc_debug", parallel=2)
        await kit.engine.tick()
        assert (await kit.run(first)).state is RunState.RUNNING
        assert (await kit.run(waiting)).state is RunState.QUEUED

        drop_first_task(kit, "csb_sdlc_debug")  # edited while `waiting` sits in the queue
        await run_until_idle(kit.engine, kit.store)

        assert (await kit.run(first)).state is RunState.FINISHED  # already started: not checked again
        voided = await kit.run(waiting)
        assert voided.state is RunState.CANCELLED and voided.started_at is None
        assert voided.stop_reason and "approval is void" in voided.stop_reason
        assert {lane.state for lane in await kit.lanes(waiting)} == {LaneStatus.CANCELLED}
        assert all(lane.attempt == 0 for lane in await kit.lanes(waiting))
        ((action, reason),) = await audit_rows(kit, waiting)
        assert action == "voided"
        assert reason == f"at launch, spec drift: `{SUITE_FILE}` changed; 0 tasks added and 1 removed"
        async with kit.store.read() as session:
            queued = await outbox.due(session, kit.clock.now())
        notices = [item for item in queued if item.run_id == waiting]
        (notice,) = [item for item in notices if item.kind is OutboxKind.NOTICE]
        assert "did not start" in stored_text(notice.text or "")
        assert [item.kind for item in notices if item is not notice] == [OutboxKind.STATUS]
        # Each closed run, the finished one and the voided one, has its summary, equal to its lanes summed.
        assert (await assert_summary_true(kit.store, first)).state is RunState.FINISHED
        voided_summary = await assert_summary_true(kit.store, waiting)
        assert dict(voided_summary.figures.outcomes) == {LaneStatus.CANCELLED: len(await kit.lanes(waiting))}


@pytest.mark.slow
async def test_suite_gone_voids_and_an_unreadable_checkout_only_waits(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        matrix = kit.repo / "configs" / "eval_matrix.json"
        good = matrix.read_text()
        matrix.write_text("{ not json")  # an operator mid-edit: neither start nor void
        await kit.engine.tick()
        assert (await kit.run(run_id)).state is RunState.QUEUED
        assert await audit_rows(kit, run_id) == []

        matrix.write_text(good)
        suite_file = kit.repo / SUITE_FILE
        data = json.loads(suite_file.read_text())
        data["tasks"] = [task for task in data["tasks"] if task["suite"] != "csb_sdlc_fix"]
        del data["suites"]["csb_sdlc_fix"]
        suite_file.write_text(json.dumps(data, indent=2))
        await kit.engine.tick()
        run = await kit.run(run_id)
        assert run.state is RunState.CANCELLED
        ((action, reason),) = await audit_rows(kit, run_id)
        assert action == "voided"
        assert reason and "no longer resolves in the CSB checkout: unknown suite" in reason
        assert running_count(kit.engine.executor) == 0
