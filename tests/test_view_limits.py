"""Every view, built from the most hostile and the longest inputs a user or a file can supply, stays
within Slack's limits and shows what was typed as typed: no live mention, no link, no exception.

The limits are the playground's (`bot.playground.check_message_blocks` / `check_view`, the same checks
the Slack stand-in applies) and slack_sdk's own validation, which raises when a field is too long.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from bot.csb.child_env import child_environ
from bot.csb.harbor_run import LaunchConfig
from bot.csb.preflight import AccountHealth, AccountStatus
from bot.domain.mrkdwn import clip, escape
from bot.domain.outcome import LaneStatus
from bot.domain.promotion import OfficialLine, RunSummary
from bot.domain.reason import LaneReason
from bot.domain.slack_limits import MAX_MESSAGE_BLOCKS, MAX_MESSAGE_TEXT, MAX_SECTION_TEXT
from bot.domain.spec import LanePlan, LaneRole, RunParams, RunSpec, TaskRef
from bot.domain.stats import LaneResult, PairOutcome
from bot.domain.words import agree, plural
from bot.playground import check_message_blocks, check_view
from bot.services.checks import CheckLine, RequestChecks
from bot.services.queries import RunProgress
from bot.slack.views import CardView, RunCardView, approval_card, card_fallback_text, home_tab
from bot.slack.views.cancel_modal import cancel_modal
from bot.slack.views.edit_modal import edit_modal
from bot.slack.views.format import CONTEXT_LIMIT
from bot.slack.views.home import HomeRequest, HomeResult, HomeRun, HomeView
from bot.slack.views.reject_modal import reject_modal
from bot.slack.views.replies import (
    accounts_text,
    audit_text,
    checkout_values,
    plan_text,
    status_text,
    suites_text,
)
from bot.slack.views.report import ReportView, paired_report, report_dm, rerun_button
from bot.store.models import AuditEvent, RequestState

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
HOSTILE = "<!channel> <https://x|Click here to approve> & <@U0EVE>"
LIVE = ("<!channel>", "<https://x", "<@U0EVE>")  # what must never reach Slack unescaped
MODEL = "anthropic/" + HOSTILE + "m" * 2000
PATH = "benchmarks/suites/" + "deep/" * 600 + HOSTILE + ".json"
REASON = HOSTILE + " " + "r" * 3200
TASKS = tuple(f"task-{i:03d}-" + "x" * 90 for i in range(60))
LANES = (
    LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none"),
    LanePlan(role=LaneRole.MCP, config="mcp-remote-direct", mcp_type="sourcegraph_full"),
)
# Built without validation: the views must hold even if a value slipped past the bounds at entry.
PARAMS = RunParams.model_construct(model=MODEL, suite=HOSTILE + "s" * 500, full_config=HOSTILE + "c" * 500)
SPEC = RunSpec(
    params=PARAMS,
    task_file=PATH,
    task_file_sha256="0" * 64,
    tasks=tuple(TaskRef(task_id=t, suite=HOSTILE, path=f"benchmarks/tasks/s/{t}") for t in TASKS),
    lanes=LANES,
    parallel=8,
)
CHECKS = RequestChecks(
    lines=(
        CheckLine(name="tasks", ok=True, blocking=False, message=f"60 tasks in {HOSTILE}"),
        CheckLine(name="folders", ok=False, blocking=True, message="missing: " + PATH),
        CheckLine(
            name="accounts", ok=True, blocking=False, message="account_health.py not present", skipped=True
        ),
        CheckLine(name="cost", ok=False, blocking=True, message="script said: " + REASON),
    ),
    missing_counterparts=TASKS,
)


def run_card(state: str, **extra: Any) -> RunCardView:
    values: dict[str, Any] = {
        "run_id": 7,
        "state": state,
        "pairs_done": 3,
        "pairs_total": 60,
        "lanes_running": 2,
        "lanes_queued": 100,
        "counts": {"baseline": {LaneStatus.ERRORED: 3}, "mcp": {LaneStatus.PASSED: 3}},
        "started_at": AT,
        "now": AT + timedelta(hours=1),
        "stopped_by": "U0BOB",
    }
    return RunCardView(**{**values, **extra})


def card(state: RequestState, run: RunCardView | None = None) -> CardView:
    return CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="ab" * 32,
        requester="U0ALICE",
        state=state,
        checks=CHECKS,
        approvals=("U0BOB", "U0CAROL"),
        approvals_needed=3,
        change_note=escape("model: a → " + MODEL),
        expires_at=AT,
        decided_by="U0BOB",
        decided_at=AT,
        reason=REASON,
        run=run,
        rerun_of="Rerun of #6: 2 failed, 0 errored lanes (2 tasks run again)",
    )


CARDS = {
    "pending": card(RequestState.PENDING),
    "rejected with a 3,200-character reason": card(RequestState.REJECTED),
    "cancelled with a 3,200-character reason": card(
        RequestState.APPROVED, run_card("cancelled", stop_reason=REASON, finished_at=AT)
    ),
    "draining": card(RequestState.APPROVED, run_card("draining", stop_reason=REASON)),
    "paused": card(RequestState.APPROVED, run_card("paused", paused_reason=REASON)),
    "queued": card(RequestState.APPROVED, run_card("queued", queue_position=3)),
}


def lane(status: LaneStatus, reason: str | None = None) -> LaneResult:
    said = LaneReason(message=reason) if reason is not None else None
    return LaneResult(status, 1.0 if status is LaneStatus.PASSED else None, reason=said)


REPORT = ReportView(
    run_id=7,
    output_dirs=["runs/staging/" + "d" * 1500 + HOSTILE],
    title=HOSTILE + "t" * 300,
    model=MODEL,
    pairs=[
        PairOutcome(t, HOSTILE + str(i % 3), lane(LaneStatus.PASSED), lane(LaneStatus.ERRORED, REASON))
        for i, t in enumerate(TASKS)
    ],
    cancelled=True,
    stopped_by="U0BOB",
    stop_reason=REASON,
)


def texts(node: Any) -> Iterator[str]:
    """Every mrkdwn string of a payload: what Slack parses for mentions and links (not plain_text)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                if node.get("type") != "plain_text":
                    yield value
            else:
                yield from texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from texts(item)


def assert_shown_as_typed(*strings: str) -> None:
    for text in strings:
        for live in LIVE:
            assert live not in text, text[:300]


def assert_message_fits(blocks: list[Block], text: str) -> None:
    payload = [block.to_dict() for block in blocks]  # slack_sdk raises on an over-long field
    assert check_message_blocks(payload) == []
    assert len(payload) <= MAX_MESSAGE_BLOCKS and len(text) <= MAX_MESSAGE_TEXT
    for block in payload:
        if block["type"] == "context":
            assert all(len(element.get("text", "")) <= CONTEXT_LIMIT for element in block["elements"])
    assert_shown_as_typed(text, *texts(payload))


def assert_view_fits(view: View) -> None:
    payload = view.to_dict()
    assert check_view(payload) == []
    mrkdwn = [t for block in payload["blocks"] if block["type"] == "section" for t in texts(block)]
    assert_shown_as_typed(*mrkdwn)


@pytest.mark.parametrize("name", sorted(CARDS))
def test_every_card_fits_slack_and_shows_user_text_as_typed(name: str) -> None:
    view = CARDS[name]
    assert_message_fits(approval_card(view), card_fallback_text(view))


def test_the_card_shows_the_hostile_model_escaped_and_cut_with_an_ellipsis() -> None:
    payload = [block.to_dict() for block in approval_card(CARDS["pending"])]
    model_field = next(t for t in texts(payload) if t.startswith("*Model*"))
    assert model_field.startswith("*Model*\n`anthropic/&lt;!channel&gt; &lt;https://x|Click here")
    assert model_field.endswith("…`")


def test_a_reason_cut_on_the_card_never_leaves_half_an_escape() -> None:
    cut = clip(escape("a" * 2997 + "<b>"), 3000)  # the cut falls inside `&lt;`
    assert cut == "a" * 2997 + "…"
    assert clip("a" * 2990 + "<https://x|y>", 3000) == "a" * 2990 + "…"  # and inside a link token
    assert clip("short", 10) == "short"


def test_the_report_and_the_dm_fit_slack_and_show_user_text_as_typed() -> None:
    message = paired_report(REPORT)
    assert_message_fits([*message.blocks, *rerun_button(REPORT)], message.text)
    text, blocks = report_dm(REPORT, message.text, "https://slack.com/archives/C0PLAY/p1")
    assert_message_fits(blocks, text)


def test_home_tab_fits_slack_with_many_long_items() -> None:
    summary = f"`{escape(MODEL[:100])}` on `{escape(HOSTILE)}`: 60 tasks"
    home = HomeView(
        user_id="U0BOB",
        waiting=[HomeRequest(i, "U0ALICE", summary * 20, True) for i in range(40)],
        my_runs=[HomeRun(i, "running", HOSTILE + "s" * 200, 3, 60) for i in range(40)],
        runs_queued=3,
        runs_running=2,
        lanes_running=8,
        slots=8,
        official=[HomeResult(i, HOSTILE, MODEL, "1/3 passed", "2/3 passed") for i in range(40)],
        manifest=[
            OfficialLine(
                suite=HOSTILE, config=HOSTILE, model=MODEL, timestamp=HOSTILE,
                figures=RunSummary(task_count=9, passed=3), reviewer=HOSTILE * 5,
            )
            for _ in range(300)
        ],
    )  # fmt: skip
    assert_view_fits(home_tab(home))
    assert_view_fits(home_tab(replace(home, manifest=None, manifest_problem=HOSTILE * 50)))


def test_modals_fit_slack_with_long_values() -> None:
    assert_view_fits(cancel_modal(7, "d" * 4000 + HOSTILE, running=1, queued=5))
    assert_view_fits(reject_modal(7, 3))
    assert_view_fits(edit_modal(7, 3, PARAMS.model_copy(update={"model": MODEL[:2900]})))


def test_ephemeral_replies_fit_slack_and_show_user_text_as_typed() -> None:
    events = [
        AuditEvent(request_id=7, action="cancelled", actor="U0BOB", at=AT, spec_hash="ab" * 32, reason=REASON)
        for _ in range(5)
    ]
    health = AccountHealth(
        ok_to_launch=False,
        summary=HOSTILE,
        recommended_parallel=None,
        accounts=(AccountStatus(label=HOSTILE, status="blocked", available_slots=1, reasons=(REASON,)),),
    )
    progress = [RunProgress(i, "running", HOSTILE + "d" * 300, 6, 2, 2) for i in range(30)]
    replies = [
        audit_text(7, events),
        accounts_text(health),
        status_text(progress),
        suites_text(PATH, {HOSTILE + str(i): 3 for i in range(100)}),
        checkout_values(PATH, {HOSTILE: 3}, [HOSTILE], {}),
    ]
    for reply in replies:
        assert len(reply) <= MAX_SECTION_TEXT
        assert_shown_as_typed(reply)


def test_a_dry_run_too_long_for_one_reply_comes_in_whole_lines_and_loses_nothing(tmp_path: Path) -> None:
    launch = LaunchConfig(
        repo=tmp_path, harbor="harbor", base_env=child_environ({}), timeout_multiplier=1, daytona=False
    )
    parts = plan_text(SPEC, CHECKS, launch)
    assert len(parts) > 1
    assert all(len(part) <= MAX_SECTION_TEXT for part in parts)
    assert_shown_as_typed(*parts)
    lines = "\n".join(parts).splitlines()
    assert lines[0].startswith("*Dry run*") and "*Preflight*" in lines
    assert lines[-1] == ":x: As it stands this request could not be approved."


def test_plurals() -> None:
    assert plural(1, "task") == "1 task" and plural(2, "task") == "2 tasks" and plural(0, "lane") == "0 lanes"


def one_task_card(run: RunCardView | None = None) -> CardView:
    spec = RunSpec(
        params=RunParams(suite="csb_sdlc_fix", parallel=1),
        task_file="benchmarks/suites/csb-example.json",
        task_file_sha256="0" * 64,
        tasks=(TaskRef(task_id="t1", suite="csb_sdlc_fix", path="benchmarks/tasks/csb_sdlc_fix/t1"),),
        lanes=LANES[:1],
        parallel=1,
    )
    return CardView(1, spec, "ab" * 32, "U0ALICE", RequestState.APPROVED, decided_at=AT, run=run)


def card_texts(view: CardView) -> str:
    return "\n".join(texts([block.to_dict() for block in approval_card(view)]))


def test_a_card_speaks_of_one_task_one_lane_and_one_slot_in_the_singular() -> None:
    shown = card_texts(one_task_card(run_card("running", pairs_done=0, pairs_total=1, lanes_running=1)))
    assert "*Tasks*\n1 task · 1 lane" in shown and "*Parallel*\n1 slot" in shown
    assert "0/1 pair done · 1 lane running" in shown
    assert card_fallback_text(one_task_card()).endswith("on csb_sdlc_fix, 1 task")


def test_eta_unknown_until_comparable_lanes_have_finished() -> None:
    unknown = card_texts(one_task_card(run_card("running", eta_seconds=None)))
    assert "ETA unknown" in unknown
    known = card_texts(one_task_card(run_card("running", eta_seconds=300.0)))
    assert "ETA ~5 min 00 s" in known and "unknown" not in known
    assert "start time unknown" in card_texts(one_task_card(run_card("queued", queue_position=2)))


def test_a_model_not_of_the_form_provider_name_is_flagged_and_a_proper_one_is_not() -> None:
    assert "not of the form" in card_texts(CARDS["pending"])
    assert "not of the form" not in card_texts(one_task_card())


def test_verbs_agree_with_their_count() -> None:
    assert f"{plural(1, 'running lane')} {agree(1, 'is', 'are')}" == "1 running lane is"
    assert f"{plural(2, 'running lane')} {agree(2, 'finishes', 'finish')}" == "2 running lanes finish"
    assert plural(2, "reply", "replies") == "2 replies" and agree(0, "task") == "tasks"
