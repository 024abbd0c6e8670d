"""An example-bench run whose report separates results from what CSB's curation does not count: the
Harbor stand-in plays a zero-token account, a three-line crash, an MCP lane that never calls MCP, a
baseline that does, a rate limit, and trials with and without task_metrics.json cost. The report (built
as the bot builds it, from the lanes the engine stored) excludes exactly the invalid pairs, groups the
failures by cause, retried only what CSB's catalog retries, and reads the costs CSB reads."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import engine_kit, make_accounts
from idle import run_until_idle

from bot.domain.causes import group_causes, pair_causes
from bot.domain.integrity import InvalidRule
from bot.domain.outcome import LaneStatus
from bot.domain.stats import summarize
from bot.domain.verdict import CostSource
from bot.slack.outbound.report_loader import build_report_view
from bot.slack.views.report import failure_causes, paired_report
from bot.store import requests

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"
CSV, LRU, RETRY = "csv-quoting-debug-001", "lru-cache-eviction-debug-001", "retry-backoff-debug-001"
SCRIPT = {
    f"{SLUG}/baseline": "zerotokens",
    f"{PAGE}/mcp": "nomcp",
    f"{MERGE}/baseline": "mcpcall",
    f"{CSV}/baseline": "crash3",
    f"{LRU}/mcp": "fp-api_rate_limit",
    RETRY: "metrics",
}
INVALID = {
    SLUG: (InvalidRule.MANIFEST_ERRORED, "baseline"),
    PAGE: (InvalidRule.MCP_NEVER_USED, "mcp"),
    MERGE: (InvalidRule.BASELINE_CONTAMINATED, "baseline"),
    CSV: (InvalidRule.MANIFEST_ERRORED, "baseline"),
}


async def test_the_report_excludes_exactly_the_invalid_pairs(tmp_path: Path) -> None:
    make_accounts(tmp_path, "account1", "account2")  # a rate-limited account rests; the other goes on
    async with engine_kit(tmp_path, retry_limit=1, infra_pause_rate=1.0, sessions_per_account=8) as kit:
        kit.script(SCRIPT)
        run_id = await kit.approve(None, parallel=8)
        await run_until_idle(kit.engine, kit.store)
        for _ in range(6):  # the retries wait out their backoff (at most 40 s here)
            if (await kit.run(run_id)).state.is_final:
                break
            kit.clock.advance(timedelta(seconds=40))
            await run_until_idle(kit.engine, kit.store)
        run = await kit.run(run_id)
        lanes = await kit.lanes(run_id)
        async with kit.store.read() as session:
            request = await requests.get_request(session, run.request_id)
        assert request is not None and run.state.value == "finished"

    by_key = {(lane.task_id, lane.role): lane for lane in lanes}
    # Retried by CSB's catalog: the zero-token account and the rate limit; the crash and the rest are not.
    assert by_key[SLUG, "baseline"].attempt == 2 and by_key[LRU, "mcp"].attempt == 2
    assert by_key[CSV, "baseline"].attempt == 1 and by_key[MERGE, "baseline"].attempt == 1
    assert (
        by_key[LRU, "mcp"].state is LaneStatus.ERRORED and by_key[LRU, "mcp"].fingerprint == "api_rate_limit"
    )

    view = build_report_view(run, request, lanes)
    removed = {
        p.task_id: [(i.rule, i.lane) for i in p.invalid] for p in view.pairs if p.complete and p.invalid
    }
    assert removed == {task: [found] for task, found in INVALID.items()}
    counted, everything = summarize(view.pairs), summarize(view.pairs, curated=False)
    assert counted.invalid == 4 and everything.n == counted.n + 4
    assert {p.task_id for p in view.pairs if p.counted} == {
        p.task_id for p in view.pairs if p.complete
    } - set(INVALID)

    causes = {group.cause.id: group.lanes for group in failure_causes(view)}
    assert causes["api_rate_limit"] == (f"{LRU}/mcp",)
    assert causes["zero_token"] == (f"{SLUG}/baseline",) and causes["crash"] == (f"{CSV}/baseline",)
    assert causes["mcp_never_used"] == (f"{PAGE}/mcp",) and causes["baseline_contaminated"] == (
        f"{MERGE}/baseline",
    )

    metrics = next(p for p in view.pairs if p.task_id == RETRY)
    assert metrics.mcp.verdict is not None and metrics.mcp.verdict.cost_source is CostSource.TASK_METRICS
    plain = next(p for p in view.pairs if p.task_id == SLUG)
    assert plain.mcp.verdict is not None and plain.mcp.verdict.cost_source is CostSource.FORMULA
    assert plain.baseline.cost_usd is None  # zero tokens: cost_report.py skips it

    text = "\n".join(b.to_dict().get("text", {}).get("text", "") for b in paired_report(view).blocks)
    assert (
        f"{counted.n} complete pairs · 1 errored or incomplete, excluded · 4 not results by CSB's rules"
        in text
    )
    assert "*Failures by cause*" in text and "`api_rate_limit` API rate limit / overloaded ×1" in text
    ended = {lane.role: (lane.state, None) for lane in lanes if lane.task_id == PAGE}
    assert group_causes(pair_causes(PAGE, ended)) == []  # without verdicts nothing is charged
