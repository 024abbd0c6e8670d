"""CSB's verdicts are stored with each lane when it ends, read from its trial folder once, in the engine's
worker thread, and kept: the example bench's Harbor stand-in as real child processes, a real database."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from engine_kit import engine_kit, make_accounts
from idle import run_until_idle

from bot.domain.outcome import LaneStatus
from bot.domain.verdict import CostSource, ManifestStatus, StatusToolStatus, stored_verdict
from bot.slack.views.events import stored_text
from bot.store import outbox
from bot.store.models import OutboxKind, RunState

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"


async def test_each_ended_lane_keeps_csbs_verdicts(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, retry_limit=0) as kit:
        kit.script({f"{SLUG}/mcp": "timeout", f"{MERGE}/mcp": "error", f"{PAGE}/baseline": "crash"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        lanes = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}

        scored = lanes[SLUG, "mcp"]  # ran out of time, its work scored: a timed-out pass to both tools
        verdict = stored_verdict(scored.verdict_json)
        assert verdict is not None and verdict.config == scored.config
        assert scored.manifest_status == "passed" and scored.status_tool == "completed_pass"
        assert verdict.timed_out and verdict.fingerprint is not None and verdict.fingerprint.id == "timeout"
        assert scored.fingerprint == "timeout"

        errored = lanes[MERGE, "mcp"]  # an exception without a reward
        assert errored.state is LaneStatus.ERRORED
        assert errored.manifest_status == ManifestStatus.ERRORED.value
        assert errored.status_tool == StatusToolStatus.ERRORED.value
        assert errored.fingerprint == "unknown"  # "non-zero exit code 1" is none of the twelve

        passed = lanes[SLUG, "baseline"]
        verdict = stored_verdict(passed.verdict_json)
        assert verdict is not None and verdict.cost_source is CostSource.FORMULA  # no task_metrics.json
        assert passed.input_tokens is not None and passed.cache_read_tokens is not None
        assert passed.cost_usd == verdict.cost_usd and passed.cost_usd is not None
        assert passed.mcp_calls is None and passed.contaminated is False  # no transcript: unknown, not 0

        lost = lanes[PAGE, "baseline"]  # Harbor crashed before writing a result: no trial, no verdict
        assert lost.state is LaneStatus.ERRORED
        assert lost.verdict_json is None and lost.manifest_status is None


async def test_a_pause_names_the_fingerprints_that_caused_it_and_csbs_advice(
    tmp_path: Path, db_url: str
) -> None:
    make_accounts(tmp_path, "account1", "account2")
    config = {"infra_pause_min_attempts": 4, "infra_pause_rate": 0.5, "sessions_per_account": 3}
    async with engine_kit(tmp_path, url=db_url, **config) as kit:
        kit.script({SLUG: "ratelimit", PAGE: "ratelimit", MERGE: "ratelimit"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        run = await kit.run(run_id)
        assert run.state is RunState.PAUSED
        assert re.fullmatch(
            r"([4-6]) of \1 lane attempts failed on infrastructure: api_rate_limit ×\1",
            run.paused_reason or "",
        )
        async with kit.store.read() as session:
            (notice,) = [i for i in await outbox.due(session, kit.clock.now()) if i.kind is OutboxKind.NOTICE]
        text = stored_text(notice.text or "")
        assert (
            "• `api_rate_limit` (API rate limit / overloaded): Reduce parallelism or wait before retrying."
            in text
        )
        assert "Daytona" not in text
        lanes = await kit.lanes(run_id)
        retried = [lane for lane in lanes if lane.infra_failures]
        assert retried and all(lane.fingerprint == "api_rate_limit" for lane in retried)  # kept on requeue
