"""A closed run's summary against what its lanes give, summed here the way `/csb runs` and App Home summed
them before there were summaries (every lane read, every verdict parsed), and the card's own count of
pairs: a test that closes a run calls `assert_summary_true` to show the summary written is the truth."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from sqlalchemy import select

from bot.domain.manifest_names import manifest_task_key
from bot.domain.run_summary import lane_result
from bot.domain.spec import LaneRole
from bot.domain.states import LaneStatus
from bot.domain.verdict import ManifestStatus
from bot.slack.outbound.render import load_run_card
from bot.store import records, requests, runs, summaries
from bot.store.db import Store
from bot.store.models import RunSummary


async def stored_summary(store: Store, run_id: int) -> records.RunSummary | None:
    async with store.read() as session:
        row = (
            await session.execute(select(RunSummary).where(RunSummary.run_id == run_id))
        ).scalar_one_or_none()
        return None if row is None else records.RunSummary.from_row(row)


async def assert_summary_true(store: Store, run_id: int) -> records.RunSummary:
    summary = await stored_summary(store, run_id)
    assert summary is not None, f"run #{run_id} closed without a summary"
    async with store.read() as session:
        run = await runs.get_run(session, run_id)
        assert run is not None
        request = await requests.get_request(session, run.request_id)
        assert request is not None
        lanes = await runs.run_lanes(session, run_id)
        card = await load_run_card(session, run_id, datetime.now(UTC))
        assert card is not None
    spec = request.spec
    assert (summary.state, summary.finished_at) == (run.state, run.finished_at)
    assert (summary.requester, summary.channel_id, summary.category) == (
        request.requester,
        request.channel_id,
        request.category,
    )
    assert (summary.model, summary.suite_label, summary.suite) == (
        spec.params.model,
        spec.suite_label,
        spec.params.suite,
    )
    assert set(summary.suites) == set(spec.suites)
    figures = summary.figures
    assert (figures.pairs_done, figures.pairs_total) == (card.pairs_done, card.pairs_total)
    results = [result for lane in lanes if (result := lane_result(lane)) is not None]
    for role, headline, tally in (
        (LaneRole.BASELINE, figures.baseline, figures.baseline_lanes),
        (LaneRole.MCP, figures.mcp, figures.mcp_lanes),
    ):
        valid = [r for r in results if r.role is role and r.counts]
        mean = sum(r.score for r in valid) / len(valid) if valid else None
        assert (headline.passed, headline.valid) == (sum(r.passed for r in valid), len(valid))
        assert headline.mean_reward == mean
        mine = [lane for lane in lanes if lane.role == role.value]
        passed = sum(1 for lane in mine if lane.state is LaneStatus.PASSED)
        assert (tally.passed, tally.lanes) == (passed, len(mine))
    assert dict(figures.outcomes) == dict(Counter(lane.state for lane in lanes))
    assert figures.cost_usd == sum(lane.cost_usd or 0.0 for lane in lanes)
    assert figures.input_tokens == sum(lane.input_tokens or 0 for lane in lanes)
    assert figures.output_tokens == sum(lane.output_tokens or 0 for lane in lanes)
    # What `/csb coverage --staging` counts of it: the lanes passed or failed that break no curation rule.
    async with store.read() as session:
        counted = await summaries.valid_lane_counts(session, [run_id])
        folder = select(RunSummary.run_dir).where(RunSummary.run_id == run_id)
        run_dir = (await session.execute(folder)).scalar()
    assert run_dir == run.run_dir
    assert counted == Counter(
        (r.suite, r.config, manifest_task_key(r.task))
        for r in results
        if r.status in (ManifestStatus.PASSED, ManifestStatus.FAILED) and r.invalid is None
    )
    return summary
