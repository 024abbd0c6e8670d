"""Run summaries, on both databases: what a closed run's summary holds equals what its lanes give when summed
the old way (`summary_check.py`), for a history with every lane outcome, verdicts that break CSB's
curation rules, a run finished and a run cancelled through the engine's closing; `/csb runs` and App Home
read them and show those figures; migration 0010 fills them in for runs closed before it."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from sqlalchemy import delete, select, text, update
from summary_check import assert_summary_true, stored_summary

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from history import Answers  # noqa: E402
from history_fill import NOW, fill  # noqa: E402

from bot.domain.outcome import LaneStatus  # noqa: E402
from bot.domain.states import RunState  # noqa: E402
from bot.domain.verdict import LaneVerdict, ManifestRule, ManifestStatus, StatusToolStatus  # noqa: E402
from bot.engine.closing import close_runs  # noqa: E402
from bot.store import runs, summaries  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.models import Lane, RunSummary  # noqa: E402


def _verdict(
    config: str, status: ManifestStatus, *, mcp_calls: int | None, rule: ManifestRule | None = None
) -> str:
    return LaneVerdict(
        config=config,
        status_tool=StatusToolStatus.COMPLETED_PASS
        if status is ManifestStatus.PASSED
        else StatusToolStatus.COMPLETED_FAIL,
        manifest_status=status,
        manifest_rule=rule,
        mcp_calls=mcp_calls,
        contaminated=config.startswith("baseline") and bool(mcp_calls),
        cost_usd=1.25,
    ).model_dump_json()


async def _end_lanes(store: Store, run_id: int, *, leave_queued: bool) -> None:
    """The probe's lanes not ended yet end every way a lane can: passed or failed with CSB's verdicts
    (one contaminated, one with no MCP call on its MCP lane, one errored for zero tokens), errored and
    timed out without a verdict; with `leave_queued`, the queued ones are left for the close to cancel."""
    async with store.read() as session:
        lanes = [lane for lane in await runs.run_lanes(session, run_id) if not lane.state.is_final]
    ends = [
        (LaneStatus.PASSED, ManifestStatus.PASSED, 0, None, 1.0),
        (LaneStatus.PASSED, ManifestStatus.PASSED, 3, None, 1.0),  # contaminated baseline / MCP used
        (LaneStatus.FAILED, ManifestStatus.FAILED, 0, None, 0.0),  # an MCP lane with no MCP call: invalid
        (LaneStatus.FAILED, ManifestStatus.ERRORED, 0, ManifestRule.ZERO_TOKEN, 0.0),
        (LaneStatus.ERRORED, None, None, None, None),
        (LaneStatus.TIMEOUT, None, None, None, None),
    ]
    async with store.write() as session:
        for index, lane in enumerate(lanes):
            if leave_queued and lane.state is LaneStatus.QUEUED:
                continue
            state, status, calls, rule, reward = ends[index % len(ends)]
            verdict = None if status is None else _verdict(lane.config, status, mcp_calls=calls, rule=rule)
            await session.execute(
                update(Lane)
                .where(Lane.id == lane.id)
                .values(
                    state=state,
                    reward=reward,
                    verdict_json=verdict,
                    cost_usd=1.25 if verdict else None,
                    input_tokens=1000 if verdict else None,
                    finished_at=NOW - timedelta(minutes=5),
                )
            )


async def test_summaries_of_a_history_equal_its_lanes_summed(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    filled = await fill(store, 6, 11)
    for run_id in range(1, filled.runs + 1):
        await assert_summary_true(store, run_id)
    assert await stored_summary(store, filled.probe_run) is None  # under way: no summary yet
    await _end_lanes(store, filled.probe_run, leave_queued=False)
    async with store.write() as session:
        assert await close_runs(session, NOW) == [filled.probe_run]
    summary = await assert_summary_true(store, filled.probe_run)
    assert summary.state is RunState.FINISHED
    outcomes = dict(summary.figures.outcomes)
    assert set(outcomes) >= {LaneStatus.PASSED, LaneStatus.FAILED, LaneStatus.ERRORED, LaneStatus.TIMEOUT}
    # Some lanes break a curation rule: fewer valid results than lanes that ran to an end.
    both = summary.figures.baseline.valid + summary.figures.mcp.valid
    assert 0 < both < sum(n for state, n in outcomes.items() if state is not LaneStatus.CANCELLED)
    async with store.read() as session:
        kept = await summaries.valid_lane_counts(session, [filled.probe_run])
    assert 0 < kept.total() < both + outcomes[LaneStatus.ERRORED]
    # The answers read the summaries: `/csb runs` lists the probe first (the newest finish), with the
    # figures its lanes give; App Home lists the admin's runs with their pairs.
    answers = Answers(store, filled.probe_run)
    listed = (await answers.runs()).splitlines()
    first = next(line for line in listed if "#" in line)
    baseline = summary.figures.baseline
    assert f"#{filled.probe_run}" in first and f"{baseline.passed}/{baseline.valid}" in first
    home = str((await answers.home()).to_dict())
    assert f"#{filled.probe_run}" in home
    await store.close()


async def test_a_cancelled_run_is_summed_with_its_lanes_cancelled(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    filled = await fill(store, 2, 7)
    await _end_lanes(store, filled.probe_run, leave_queued=True)
    async with store.write() as session:
        assert await runs.move_run(
            session, filled.probe_run, from_states=[RunState.RUNNING], to=RunState.CANCELLING
        )
        assert await close_runs(session, NOW) == [filled.probe_run]
    summary = await assert_summary_true(store, filled.probe_run)
    assert summary.state is RunState.CANCELLED
    assert dict(summary.figures.outcomes)[LaneStatus.CANCELLED] > 0
    assert summary.figures.pairs_done < summary.figures.pairs_total
    # A cancelled run is not a finished one: `/csb runs` does not list it.
    async with store.read() as session:
        assert filled.probe_run not in [s.run_id for s in await summaries.finished(session, 10)]
    await store.close()


async def test_migration_0010_fills_the_summaries_of_runs_closed_before_it(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    filled = await fill(store, 5, 7)
    async with store.read() as session:
        before = {s.run_id: s for s in await summaries.finished(session, 100)}
    assert len(before) == 5
    async with store.write() as session:  # the database as 0009 left it, with its closed runs
        await session.execute(delete(RunSummary))
        await session.execute(text("DROP TABLE run_summaries"))
        await session.execute(text("UPDATE alembic_version SET version_num = '0009'"))
    await store.create_tables()  # upgrades as `serve` does at start
    async with store.read() as session:
        after = {s.run_id: s for s in await summaries.finished(session, 100)}
        kept = (await session.execute(select(RunSummary.run_id))).scalars().all()
    assert after == before
    assert filled.probe_run not in kept  # under way: summed when it closes
    await store.close()
