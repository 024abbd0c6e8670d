"""Golden files of the card for fixed inputs: pending with a blocking check, pending over its budget
with an estimate, approved past the budget by an override approver, approved and queued,
running, paused, voided before launch, finished, a cancelled rerun. Rewrite them with
`UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_card_golden.py` and review the diff."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.domain.budget import Budget, budget_lines
from bot.domain.estimate import Basis, RunEstimate, Spread
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LanePlan, LaneRole, RunParams, RunSpec, TaskRef
from bot.playground import check_message_blocks
from bot.services.checks import CheckLine, RequestChecks
from bot.slack.views import CardView, RunCardView, approval_card
from bot.store.models import RequestState

GOLDEN = Path(__file__).resolve().parent / "golden"
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
SPEC = RunSpec(
    params=RunParams(suite="csb_sdlc_fix"),
    task_file="benchmarks/suites/csb-example.json",
    task_file_sha256="0" * 64,
    tasks=tuple(
        TaskRef(task_id=t, suite="csb_sdlc_fix", path=f"benchmarks/tasks/csb_sdlc_fix/{t}", time_limit_sec=60)
        for t in ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")
    ),
    lanes=(
        LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none"),
        LanePlan(role=LaneRole.MCP, config="mcp-remote-direct", mcp_type="sourcegraph_full"),
    ),
    parallel=4,
)
BLOCKED = RequestChecks(
    lines=(
        CheckLine(name="tasks", ok=True, blocking=False, message="3 tasks in suite csb_sdlc_fix"),
        CheckLine(
            name="sourcegraph_token", ok=False, blocking=True, message="SOURCEGRAPH_ACCESS_TOKEN is not set"
        ),
    )
)

# An estimate from 40 lanes of the same suite, config and model, and the category past its block line
# while the model's own budget only warns.
ESTIMATE = RunEstimate(
    tasks=3,
    lanes=6,
    parallel=4,
    basis=Basis.EXACT,
    samples=40,
    exact_lanes=6,
    cost_usd=Spread(median=7.5, low=4.2, high=12.6),
    cost_per_task_usd=Spread(median=2.5, low=1.4, high=4.2),
    lane_seconds=Spread(median=1800.0, low=1200.0, high=3000.0),
    wall_seconds=Spread(median=450.0, low=300.0, high=750.0),
)
OVER_BUDGET = RequestChecks(
    estimate=ESTIMATE,
    budget=budget_lines(
        Budget(monthly_usd=100, models={"anthropic/claude-opus-4-5": 400}),
        category="staging",
        model="anthropic/claude-opus-4-5",
        month="2026-01",
        category_spent=95.0,
        model_spent=195.0,
        estimate_usd=7.5,
    ),
)


def run_card(state: str, done: int) -> RunCardView:
    return RunCardView(
        run_id=7,
        state=state,
        pairs_done=done,
        pairs_total=3,
        lanes_running=0 if state == "finished" else 2,
        lanes_queued=0 if state == "finished" else 6 - 2 * done - 2,
        counts={
            "baseline": {LaneStatus.PASSED: 1, LaneStatus.FAILED: done - 1},
            "mcp": {LaneStatus.PASSED: done, LaneStatus.ERRORED: 0},
        },
        eta_seconds=None if state == "finished" else 95.0,
        started_at=AT,
        finished_at=AT + timedelta(minutes=4) if state == "finished" else None,
        now=AT + timedelta(minutes=2),
    )


QUEUED = RunCardView(
    run_id=7, state="queued", pairs_done=0, pairs_total=3, lanes_running=0, lanes_queued=6,
    queue_position=2, eta_seconds=340.0, now=AT,
)  # fmt: skip
PAUSED = RunCardView(
    run_id=7, state="paused", pairs_done=1, pairs_total=3, lanes_running=0, lanes_queued=2,
    counts={"baseline": {LaneStatus.PASSED: 1, LaneStatus.ERRORED: 1}, "mcp": {LaneStatus.ERRORED: 2}},
    started_at=AT, now=AT + timedelta(minutes=3),
    paused_reason="4 of 4 lane attempts failed on infrastructure",
)  # fmt: skip
VOIDED = RunCardView(
    run_id=7, state="cancelled", pairs_done=0, pairs_total=3, lanes_running=0, lanes_queued=0,
    lanes_cancelled=6, finished_at=AT, now=AT,
    stop_reason="the approval is void: the suite file or task list changed after it was approved",
)  # fmt: skip


CANCELLED = RunCardView(
    run_id=7, state="cancelled", pairs_done=1, pairs_total=3, lanes_running=0, lanes_queued=0,
    lanes_cancelled=4, counts={"baseline": {LaneStatus.PASSED: 1}, "mcp": {LaneStatus.PASSED: 1}},
    started_at=AT, finished_at=AT + timedelta(minutes=1), now=AT + timedelta(minutes=1),
    stopped_by="U0ALICE", stop_reason="<!channel> wrong model & <https://x|click here>",
)  # fmt: skip


def approved(run: RunCardView) -> CardView:
    return CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=RequestState.APPROVED,
        approvals=("U0BOB",),
        decided_by="U0BOB",
        decided_at=AT,
        run=run,
    )


CASES = {
    "card_queued.json": approved(QUEUED),
    "card_paused.json": approved(PAUSED),
    "card_voided_at_launch.json": approved(VOIDED),
    "card_pending_blocked.json": CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=RequestState.PENDING,
        checks=BLOCKED,
        expires_at=AT + timedelta(hours=24),
    ),
    "card_pending_over_budget.json": CardView(
        request_id=7,
        spec=SPEC.model_copy(
            update={"params": RunParams(suite="csb_sdlc_fix", model="anthropic/claude-opus-4-5")}
        ),
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=RequestState.PENDING,
        checks=OVER_BUDGET,
        expires_at=AT + timedelta(hours=24),
    ),
    "card_queued_budget_override.json": CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=RequestState.APPROVED,
        checks=RequestChecks(estimate=ESTIMATE.model_copy(update={"basis": Basis.NONE})),
        approvals=("U0CAROL",),
        decided_by="U0CAROL",
        decided_at=AT,
        run=QUEUED,
        budget_override_by="U0CAROL",
    ),
    "card_running.json": approved(run_card("running", 1)),
    "card_finished.json": approved(run_card("finished", 3)),
    # A rerun, cancelled with a reason that tries to mention everyone: it reads as typed.
    "card_rerun_cancelled.json": CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=RequestState.APPROVED,
        approvals=("U0BOB",),
        decided_by="U0BOB",
        decided_at=AT,
        run=CANCELLED,
        rerun_of="Rerun of #6: 2 failed, 1 errored lanes (3 tasks run again)",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_card_matches_its_golden_file_and_slacks_limits(name: str) -> None:
    blocks = [block.to_dict() for block in approval_card(CASES[name])]
    assert check_message_blocks(blocks) == []
    actual = json.dumps(blocks, indent=2, ensure_ascii=False) + "\n"
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"tests/golden/{name} is missing: run with UPDATE_GOLDEN=1 and review it"
    assert actual == path.read_text(encoding="utf-8")
