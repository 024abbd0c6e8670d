"""`bench/history.py`'s generator on a tiny history, on both databases: its rows are ones the bot can
read (records parse, states are ones the state machines end in), every answer the bench times is
produced through the services and worded by the views, and pruning it keeps what must stay."""

from __future__ import annotations

import sys
from pathlib import Path

from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from history import Answers, prune  # noqa: E402
from history_fill import ADMIN, fill  # noqa: E402

from bot.domain.states import LaneStatus, RunState  # noqa: E402
from bot.store import history, requests, runs  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.models import AuditEvent, OutboxItem  # noqa: E402
from bot.store.records import OutboxState  # noqa: E402

RUNS, TASKS = 10, 11  # run 10 has a reply set aside


async def _count(store: Store, model: type[AuditEvent] | type[OutboxItem], *where: object) -> int:
    async with store.read() as session:
        found = await session.execute(select(func.count()).select_from(model).where(*where))
        return int(found.scalar_one())


async def test_a_generated_history_reads_and_renders_as_the_bot_s_own(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    filled = await fill(store, RUNS, TASKS)
    assert (filled.runs, filled.lanes) == (RUNS, (RUNS + 1) * TASKS * 2)
    async with store.read() as session:
        finished = await history.finished_runs(session, 100)
        assert len(finished) == RUNS
        for run, request in finished:
            assert len(request.spec.tasks) == TASKS and request.spec.spec_hash() == request.spec_hash
            lanes = await runs.run_lanes(session, run.id)
            assert len(lanes) == TASKS * 2 and all(lane.state.is_final for lane in lanes)
            assert all(lane.finished_at is not None and lane.started_at is not None for lane in lanes)
            assert run.finished_at == max(lane.finished_at for lane in lanes if lane.finished_at)
        probe = await runs.get_run(session, filled.probe_run)
        assert probe is not None and probe.state is RunState.RUNNING
        probe_request = await requests.get_request(session, filled.probe_run)
        assert probe_request is not None and probe_request.requester == ADMIN
        states = {lane.state for lane in await runs.run_lanes(session, filled.probe_run)}
        assert states >= {LaneStatus.QUEUED, LaneStatus.RUNNING, LaneStatus.PASSED}
    answers = Answers(store, filled.probe_run)
    status = await answers.status_run()
    assert f"#{filled.probe_run}" in status and "running" in status
    assert f"#{filled.probe_run}" in await answers.status_all()
    listed = await answers.runs()
    assert all(f"#{run.id}" in listed for run, _ in finished[:5])
    audit = await answers.audit()
    assert "launched" in audit and "approved" in audit
    home = await answers.home()
    assert home.blocks  # App Home drawn from the history, the admin's own runs among it
    set_aside = OutboxItem.state == OutboxState.DEAD
    assert await _count(store, OutboxItem, set_aside) == 1
    audit_rows = await _count(store, AuditEvent)
    pruned = await prune(store)
    assert pruned.rows > 0
    # Left: the once-ever rows (4 milestones, a report, a DM per run), the sent ones of the last 30 days.
    assert await _count(store, OutboxItem, OutboxItem.target.like("milestone:%")) == RUNS * 4
    assert await _count(store, OutboxItem, set_aside) == 1
    assert await _count(store, AuditEvent) == audit_rows
    await store.close()
