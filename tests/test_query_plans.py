"""The hot queries' plans on PostgreSQL with history behind them: no sequential scan of lanes, outbox,
audit or run summary rows. Every statement the answers of `/csb status` (of one run, and of every active
run), `/csb runs`, `/csb audit`, App Home, `/csb compare` and `/csb coverage --staging` send (as
`bench/history.py` times them) is caught as it goes to the database and asked `EXPLAIN` again.
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from postgres_cluster import Cluster
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncConnection

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from history import Answers  # noqa: E402
from history_fill import fill  # noqa: E402

from bot.store import queue, runs  # noqa: E402
from bot.store.db import Store  # noqa: E402

pytestmark = pytest.mark.slow

RUNS = 40  # 40 runs x 264 tasks x 2 lanes: 21,648 lanes, more than the 10,000 the rule names
HOT_TABLES = ("lanes", "outbox", "audit_events", "run_summaries")
SUMMARY_INDEXES = ("ix_run_summaries_finished", "ix_run_summaries_category", "ix_run_summaries_requester")
RARE_MODEL = "anthropic/claude-rarely-run"
LARGE = 10_000  # rows: below this a sequential scan is the planner's right choice (audit rows here)


async def test_the_answers_scan_no_large_table(postgres: Cluster | None) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    store = Store(postgres.new_database())
    await store.create_tables()
    filled = await fill(store, RUNS)
    assert filled.lanes > 10_000 and filled.outbox > 10_000
    async with store.engine.connect() as conn:
        await conn.execute(text("ANALYZE"))
        await conn.commit()
    sent: list[tuple[str, Any]] = []

    def caught(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            sent.append((statement, parameters))

    event.listen(store.engine.sync_engine, "before_cursor_execute", caught)
    answers = Answers(store, filled.probe_run, filled.pair)
    assert {"runs", "home", "compare", "coverage"} <= set(answers.each())
    for answer in answers.each().values():
        await answer()
    event.remove(store.engine.sync_engine, "before_cursor_execute", caught)
    assert len(sent) > 10
    async with store.engine.connect() as conn:
        large = [table for table in HOT_TABLES if await _rows(conn, table) > LARGE]
        assert "lanes" in large and "outbox" in large
        assert await _scans(conn, sent, large) == []
        # Without migration 0008's indexes that lead with `finished_at` (the spend's, and the suite's) the
        # ETA's query reads every lane: the check above would fail.
        for index in ("ix_lanes_finished", "ix_lanes_suite_finished", "ix_lanes_history"):
            await conn.execute(text(f"DROP INDEX {index}"))
        scans = await _scans(conn, sent, large)
        assert scans and all("ORDER BY lanes.finished_at DESC" in statement for statement, _ in scans)
        await conn.rollback()
        # `/csb status` counts the active runs' lanes and reads their suites by run (`runs.lane_counts`,
        # the ETA's suites), as App Home reads its runs' pairs: each finds its runs' lanes by an index that
        # leads with `run_id` (its own, or the unique key's). Without them the planner walks another index
        # from end to end (run_id is its second column), reading every lane's entry: no seq scan, as slow.
        by_run = [(st, p) for st, p in sent if "lanes.run_id IN" in st and "FROM lanes" in st]
        assert any("GROUP BY lanes.run_id, lanes.suite, lanes.state" in st for st, _ in by_run)
        assert any("SELECT DISTINCT lanes.run_id, lanes.suite" in st for st, _ in by_run)
        leading = ("using ix_lanes_run_id ", "using lanes_run_id_task_id_role_key ")
        for statement, parameters in by_run:
            plan = await _plan(conn, statement, parameters)
            assert any(index in plan for index in leading), plan
        await conn.execute(text("DROP INDEX ix_lanes_run_id"))
        await conn.execute(text("ALTER TABLE lanes DROP CONSTRAINT lanes_run_id_task_id_role_key"))
        for statement, parameters in by_run:
            plan = await _plan(conn, statement, parameters)
            assert not any(index in plan for index in leading), plan
            assert "using ix_lanes_finished" in plan or "Seq Scan on lanes" in plan, plan
        await conn.rollback()
        # The run summaries are one row per run (2,000 a year): few enough here that a scan is the planner's
        # choice. With scans priced out, each statement reading them goes through the index made for it;
        # without migration 0010's indexes `/csb runs` and App Home's latest official runs read them all.
        await conn.execute(text("SET enable_seqscan = off"))
        plans = await _plans(conn, sent, "FROM run_summaries")
        # `/csb runs`' and coverage's finished runs, App Home's official runs and own runs, by their
        # indexes; coverage's valid lanes of the runs it counts, by key.
        assert len(plans) == 5
        served = (*SUMMARY_INDEXES, "run_summaries_pkey")
        assert all(any(index in plan for index in served) for plan in plans.values()), plans
        for index in SUMMARY_INDEXES:
            await conn.execute(text(f"DROP INDEX {index}"))
        unserved = await _scans(conn, sent, ["run_summaries"])
        # The finished runs (two readers: `/csb runs`, coverage) and the official ones.
        assert len({statement for statement, _ in unserved}) == 3
        await conn.rollback()
    await store.close()


async def test_the_eta_and_the_report_scan_no_large_table(postgres: Cluster | None) -> None:
    """The ETA of the run under way (its suites' newest lanes, a part per suite), the ETA's fallback to
    its model's newest lanes (a run whose suites have none), and the report of a finished run."""
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    store = Store(postgres.new_database())
    await store.create_tables()
    filled = await fill(store, RUNS)
    async with store.engine.connect() as conn:
        # The oldest run's model used nowhere else: the newest lanes of every model walked back from the
        # newest would pass every other lane first. (For a model among the newest lanes, the planner
        # rightly walks the finished lanes and stops at the first 200 of it.)
        await conn.execute(text("UPDATE lanes SET model = :rare WHERE run_id = 1"), {"rare": RARE_MODEL})
        await conn.execute(text("ANALYZE"))
        await conn.commit()
    sent: list[tuple[str, Any]] = []

    def caught(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, _many: bool) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "(SELECT")):
            sent.append((statement, parameters))

    event.listen(store.engine.sync_engine, "before_cursor_execute", caught)
    async with store.read() as session:
        figures = await queue.queue_figures(session, filled.probe_run)
        probe = await runs.get_run(session, filled.probe_run)
        assert probe is not None
        # No lanes of its own, so no suites: its model's lanes are read instead.
        no_suites = replace(probe, id=filled.probe_run + 1000, model=RARE_MODEL)
        by_model = await queue.mean_lane_seconds(session, no_suites)
        await runs.run_lanes(session, filled.probe_run - 1)
    event.remove(store.engine.sync_engine, "before_cursor_execute", caught)
    assert figures.finish_eta_sec is not None and by_model is not None
    async with store.engine.connect() as conn:
        assert await _scans(conn, sent, ["lanes"]) == []
        ((statement, parameters),) = [(st, p) for st, p in sent if "lanes.model =" in st]
        assert "ix_lanes_model_finished" in await _plan(conn, statement, parameters)
        # Without migration 0011's index the fallback walks other lanes and filters them by model.
        await conn.execute(text("DROP INDEX ix_lanes_model_finished"))
        plan = await _plan(conn, statement, parameters)
        assert "ix_lanes_model_finished" not in plan and re.search(r"Filter: .*model", plan)
        await conn.rollback()
    await store.close()


async def _plan(conn: AsyncConnection, statement: str, parameters: Any) -> str:
    return "\n".join((await conn.exec_driver_sql(f"EXPLAIN {statement}", parameters)).scalars().all())


async def _rows(conn: AsyncConnection, table: str) -> int:
    return int((await conn.execute(text(f"SELECT count(*) FROM {table}"))).scalar_one())


async def _scans(
    conn: AsyncConnection, sent: list[tuple[str, Any]], tables: list[str]
) -> list[tuple[str, str]]:
    """(statement, plan line) for each sequential scan of `tables` in the plans of the statements sent."""
    unique = {(statement, repr(parameters)): (statement, parameters) for statement, parameters in sent}
    scans = []
    for statement, parameters in unique.values():
        plan = (await conn.exec_driver_sql(f"EXPLAIN {statement}", parameters)).scalars().all()
        scans += [
            (statement, line) for line in plan if re.search(rf"Seq Scan on ({'|'.join(tables)})\b", line)
        ]
    return scans


async def _plans(conn: AsyncConnection, sent: list[tuple[str, Any]], part: str) -> dict[str, str]:
    """The plan of each statement sent that has `part` in it, by statement."""
    plans = {}
    for statement, parameters in sent:
        if part in statement:
            lines = (await conn.exec_driver_sql(f"EXPLAIN {statement}", parameters)).scalars().all()
            plans[statement] = "\n".join(lines)
    return plans
