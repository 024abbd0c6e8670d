"""CSB's curation rules on pairs: a pair whose lane is `errored` to the MANIFEST, whose MCP lane never
called MCP, or whose baseline did, is not a result; the report says how many each rule removed, lists
them, and shows the headline with them counted. Pure: verdicts as the engine stores them."""

from __future__ import annotations

import csv
import io

from bot.csb.verdicts import fingerprint_error
from bot.domain.integrity import AUDIT_TRACES, InvalidRule, pair_invalidity
from bot.domain.outcome import LaneStatus
from bot.domain.reason import LaneReason
from bot.domain.states import RunState
from bot.domain.stats import LaneResult, PairKind, PairOutcome, summarize
from bot.domain.verdict import Category, LaneVerdict, ManifestRule, ManifestStatus, StatusToolStatus
from bot.playground.payloads import buttons
from bot.services.control_args import CATEGORY_A
from bot.slack.views.report import ReportView, failure_causes, paired_report, rerun_button
from bot.slack.views.report_csv import COLUMNS, report_csv
from bot.slack.views.run_card import RunCardView, run_blocks

BL, MCP = "baseline-local-direct", "mcp-remote-direct"


def _verdict(
    config: str, *, mcp_calls: int | None = None, zero_token: bool = False, passed: bool = True
) -> LaneVerdict:
    status = (
        ManifestStatus.ERRORED if zero_token else ManifestStatus.PASSED if passed else ManifestStatus.FAILED
    )
    return LaneVerdict(
        config=config,
        status_tool=StatusToolStatus.COMPLETED_PASS if passed else StatusToolStatus.COMPLETED_FAIL,
        manifest_status=status,
        manifest_rule=ManifestRule.ZERO_TOKEN if zero_token else None,
        mcp_calls=mcp_calls,
        contaminated=config == BL and bool(mcp_calls),
    )


def _lane(verdict: LaneVerdict, passed: bool) -> LaneResult:
    status = LaneStatus.PASSED if passed else LaneStatus.FAILED
    return LaneResult(status=status, reward=1.0 if passed else 0.0, verdict=verdict)


def _pair(task: str, baseline: LaneVerdict, mcp: LaneVerdict, bl_pass: bool, mcp_pass: bool) -> PairOutcome:
    return PairOutcome(task, "csb_sdlc_fix", _lane(baseline, bl_pass), _lane(mcp, mcp_pass))


def _pairs() -> list[PairOutcome]:
    ok_bl, ok_mcp = _verdict(BL, mcp_calls=0), _verdict(MCP, mcp_calls=7)
    return [
        _pair("valid-1", ok_bl, ok_mcp, True, True),
        _pair("valid-2", ok_bl, ok_mcp, False, True),
        _pair("valid-3", _verdict(BL), _verdict(MCP), False, False),  # no trace: unknown counts, still valid
        # An expired account: 0 tokens, so the baseline "failed"; the MANIFEST calls it errored.
        _pair("zero-token", _verdict(BL, zero_token=True, passed=False), ok_mcp, False, True),
        _pair("mcp-not-injected", ok_bl, _verdict(MCP, mcp_calls=0, passed=False), True, False),
        _pair("contaminated", _verdict(BL, mcp_calls=2), ok_mcp, True, True),
    ]


def test_each_rule_names_its_lane_and_whether_csbs_script_would_have_seen_it() -> None:
    pairs = {pair.task_id: pair for pair in _pairs()}
    assert [(i.rule, i.lane, i.detail) for i in pairs["zero-token"].invalid] == [
        (InvalidRule.MANIFEST_ERRORED, "baseline", "zero_token")
    ]
    (never,) = pairs["mcp-not-injected"].invalid
    assert (never.rule, never.lane, never.unseen_by) == (InvalidRule.MCP_NEVER_USED, "mcp", AUDIT_TRACES)
    (dirty,) = pairs["contaminated"].invalid
    assert (dirty.rule, dirty.unseen_by) == (InvalidRule.BASELINE_CONTAMINATED, AUDIT_TRACES)
    assert [p.task_id for p in pairs.values() if p.kind is PairKind.INVALID] == [
        "zero-token",
        "mcp-not-injected",
        "contaminated",
    ]
    # On CSB's legacy names audit_traces.py applies the rule itself: nothing to label.
    (legacy,) = pair_invalidity(_verdict("baseline", mcp_calls=1), _verdict("sourcegraph_full", mcp_calls=3))
    assert legacy.unseen_by is None
    (legacy_mcp,) = pair_invalidity(_verdict("baseline"), _verdict("sourcegraph_full", mcp_calls=0))
    assert legacy_mcp.unseen_by is None


def test_the_statistics_count_valid_pairs_only_and_say_what_they_would_be_with_the_rest() -> None:
    pairs = _pairs()
    counted = summarize(pairs)
    assert (counted.n, counted.invalid, counted.excluded) == (3, 3, 0)
    assert (counted.baseline.k, counted.mcp.k) == (1, 2)
    everything = summarize(pairs, curated=False)
    assert (everything.n, everything.invalid) == (6, 0)
    assert (everything.baseline.k, everything.mcp.k) == (3, 4)


def test_the_report_lists_the_removed_pairs_with_their_rule_and_the_headline_with_them_counted() -> None:
    view = ReportView(run_id=7, output_dirs=("runs/staging/x",), title="fix", model="m", pairs=_pairs())
    text = "\n".join(block.to_dict().get("text", {}).get("text", "") for block in paired_report(view).blocks)
    assert "3 complete pairs · 3 not results by CSB's rules, excluded" in text
    assert (
        "Not results by CSB's rules, excluded: 3 pairs — a lane `errored` by the MANIFEST's rule "
        "(generate_manifest.py): 1 · MCP lane never called an MCP tool "
        "(validate_task_run.py `mcp_never_used`): 1"
        " · baseline lane called MCP (audit_traces.py baseline contamination): 1"
    ) in text
    assert "_CSB's audit_traces.py does not check `baseline-local-direct` lanes; same rule applied_" in text
    assert "_CSB's audit_traces.py does not check `mcp-remote-direct` lanes; same rule applied_" in text
    assert "With them counted (6 pairs): baseline 3/6 (50.0 %) · MCP 4/6 (66.7 %) · +16.7 pts" in text
    assert "*Not results by CSB's rules — excluded from the statistics* (3)" in text
    assert (
        "`zero-token`  baseline failed 0.00 · MCP passed 1.00"
        " — baseline `errored` to the MANIFEST (zero tokens)" in text
    )
    assert (
        "`mcp-not-injected`  baseline passed 1.00 · MCP failed 0.00"
        " — MCP lane made 0 MCP calls (mcp_never_used)" in text
    )
    assert (
        "`contaminated`  baseline passed 1.00 · MCP passed 1.00 — baseline made 2 MCP calls (contamination)"
        in text
    )


def test_a_report_without_invalid_pairs_says_nothing_of_them() -> None:
    view = ReportView(run_id=7, output_dirs=("runs/x",), title="fix", model="m", pairs=_pairs()[:3])
    text = str([block.to_dict() for block in paired_report(view).blocks])
    assert "CSB's rules" not in text and "With them counted" not in text


def _failed_with(config: str, exception: dict[str, str], *, reward: float | None = None) -> LaneResult:
    fingerprint = fingerprint_error(exception)
    verdict = LaneVerdict(
        config=config,
        status_tool=StatusToolStatus.ERRORED,
        manifest_status=ManifestStatus.ERRORED if reward is None else ManifestStatus.PASSED,
        manifest_rule=ManifestRule.EXCEPTION_WITHOUT_REWARD if reward is None else None,
        timed_out=reward is not None,
        fingerprint=fingerprint,
    )
    status = LaneStatus.ERRORED if reward is None else LaneStatus.PASSED
    return LaneResult(status=status, reward=reward, verdict=verdict)


def test_failures_are_grouped_by_cause_with_csbs_advice_and_category() -> None:
    limited = {"exception_type": "RuntimeError", "exception_message": "API Error: 429 rate limit exceeded"}
    pairs = [
        *_pairs(),
        PairOutcome("rl-1", "s", _failed_with(BL, limited), _lane(_verdict(MCP, mcp_calls=3), True)),
        PairOutcome("rl-2", "s", _lane(_verdict(BL), True), _failed_with(MCP, limited)),
        PairOutcome(
            "late",
            "s",
            _failed_with(
                BL, {"exception_type": "AgentTimeoutError", "exception_message": "timed out"}, reward=0.4
            ),
            _lane(_verdict(MCP, mcp_calls=1), True),
        ),
        PairOutcome(
            "lost",
            "s",
            LaneResult(status=LaneStatus.ERRORED, reason=LaneReason(message="harbor exited 1")),
            _lane(_verdict(MCP), True),
        ),
    ]
    view = ReportView(run_id=7, output_dirs=("runs/x",), title="fix", model="m", pairs=pairs)
    groups = failure_causes(view)
    assert [(g.cause.id, g.cause.category, g.lanes) for g in groups] == [
        ("api_rate_limit", Category.A, ("rl-1/baseline", "rl-2/mcp")),
        ("baseline_contaminated", Category.B, ("contaminated/baseline",)),
        ("mcp_never_used", Category.B, ("mcp-not-injected/mcp",)),
        ("no_trial_result", Category.A, ("lost/baseline",)),
        ("timeout", Category.D, ("late/baseline",)),
        ("zero_token", Category.A, ("zero-token/baseline",)),
    ]
    text = "\n".join(block.to_dict().get("text", {}).get("text", "") for block in paired_report(view).blocks)
    assert (
        "*Failures by cause*\n• `api_rate_limit` API rate limit / overloaded ×2 · A: rerun as is"
        " · _Reduce parallelism or wait before retrying. Check account quotas._"
    ) in text
    assert "• `timeout` Task timeout ×1 · D: genuine, do not rerun" in text
    card = RunCardView(run_id=7, state=RunState.RUNNING, pairs_done=1, pairs_total=2, lanes_running=1,
                       lanes_queued=0, causes=tuple(groups))  # fmt: skip
    card_text = run_blocks(card)[0].to_dict()["text"]["text"]
    assert "*Failures by cause*\n• `api_rate_limit` API rate limit / overloaded ×2" in card_text
    assert card_text.endswith("… 1 more causes")


def test_the_csv_carries_every_verdict_and_whether_the_pair_counted() -> None:
    limited = {"exception_type": "RuntimeError", "exception_message": "API Error: 429 rate limit exceeded"}
    pairs = [
        *_pairs(),
        PairOutcome("rl-1", "s", _failed_with(BL, limited), _lane(_verdict(MCP, mcp_calls=3), True)),
    ]
    view = ReportView(run_id=7, output_dirs=("runs/x",), title="fix", model="m", pairs=pairs)
    rows = {row["task_id"]: row for row in csv.DictReader(io.StringIO(report_csv(view)))}
    assert rows["valid-1"]["pair_counted"] == "yes" and rows["valid-1"]["pair_invalid"] == ""
    assert rows["valid-1"]["mcp_mcp_calls"] == "7" and rows["valid-3"]["mcp_mcp_calls"] == ""
    zero = rows["zero-token"]
    assert (zero["pair_counted"], zero["pair_invalid"]) == ("no", "manifest_errored:baseline")
    assert (zero["baseline_manifest_status"], zero["baseline_manifest_rule"]) == ("errored", "zero_token")
    assert zero["baseline_status_tool"] == "completed_fail" and zero["baseline_status"] == "failed"
    assert rows["contaminated"]["baseline_contaminated"] == "yes"
    assert rows["mcp-not-injected"]["pair_invalid"] == "mcp_never_used:mcp"
    limited_row = rows["rl-1"]
    assert (limited_row["baseline_fingerprint"], limited_row["baseline_category"]) == ("api_rate_limit", "A")
    assert limited_row["pair_counted"] == "no"  # incomplete: the baseline errored
    assert set(rows["valid-1"]) == set(COLUMNS)
    assert {"baseline_cache_read_tokens", "mcp_cost_source", "baseline_flags", "mcp_unread"} <= set(COLUMNS)


def test_the_rerun_button_is_offered_for_category_a_failures_only() -> None:
    genuine = PairOutcome(
        "g", "s", _lane(_verdict(BL, passed=False), False), _lane(_verdict(MCP, mcp_calls=2), True)
    )
    late = {"exception_type": "AgentTimeoutError", "exception_message": "timed out"}  # timeout: D
    timed_out = PairOutcome("t", "s", _failed_with(BL, late), _lane(_verdict(MCP, mcp_calls=2), True))
    docker = {"exception_type": "RuntimeError", "exception_message": "docker compose build failed"}  # A
    broken = PairOutcome("d", "s", _failed_with(BL, docker), _lane(_verdict(MCP, mcp_calls=2), True))

    def offered(*pairs: PairOutcome) -> bool:
        view = ReportView(run_id=7, output_dirs=("runs/x",), title="fix", model="m", pairs=pairs)
        shown = [b.text for b in buttons([block.to_dict() for block in rerun_button(view)])]
        return "Rerun failed" in shown  # beside `Rerun a task…`, which every report with tasks has

    assert not offered(genuine) and not offered(genuine, timed_out)
    assert offered(genuine, timed_out, broken)
    assert {"docker_compose_fail", "zero_token", "no_trial_result", "api_rate_limit"} <= CATEGORY_A
    assert not {"timeout", "context_window_exceeded", "mcp_never_used", "verifier_parse_error"} & CATEGORY_A
