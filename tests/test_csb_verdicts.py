"""CSB's verdicts on one trial folder, each the rule of the CSB tool it names, on the fixtures F1–F9 of
CSB's post-run rules (copied into tests/fixtures/csb/trials, sources in tests/fixtures/README.md), with
the verdict each tool gives written in the test."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.csb.json_file import MIB
from bot.csb.results import lane_outcome
from bot.csb.verdicts import CATALOG, IDS, fingerprint_error, judge_trial
from bot.csb.verdicts.bounded_read import BLOCK, LINE_LIMIT, Notes, transcript_blocks
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.verdict import (
    Category,
    CostSource,
    LaneVerdict,
    ManifestRule,
    ManifestStatus,
    StatusToolStatus,
    Tokens,
)

FIXTURES = Path(__file__).parent / "fixtures" / "csb"
TRIALS = FIXTURES / "trials"
BASELINE, MCP = "baseline-local-direct", "mcp-remote-direct"


def _judge(name: str, config: str) -> LaneVerdict:
    verdict = judge_trial(TRIALS / name, config)
    assert verdict is not None
    return verdict


def _trial(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / source
    shutil.copytree(TRIALS / source, folder)
    return folder


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


def _rules(verdict: LaneVerdict) -> list[tuple[str, str]]:
    return [(flag.rule, flag.severity) for flag in verdict.flags]


# -- F1–F4: a real pair -------------------------------------------------------------------------------


def test_f1_a_baseline_pass_with_its_task_metrics_is_clean_and_costs_what_task_metrics_says() -> None:
    verdict = _judge("F1_baseline_pass", BASELINE)
    assert verdict.manifest_status is ManifestStatus.PASSED
    assert verdict.manifest_reward == 0.4417
    assert verdict.status_tool is StatusToolStatus.COMPLETED_PASS
    assert verdict.fingerprint is None
    assert verdict.flags == ()  # F4: validate_task_run exits 0
    # cost_report.py: task_metrics' cost_usd and its uncached input count (2,746, not result.json's 845,972)
    assert verdict.cost_usd == 0.663512 and verdict.cost_source is CostSource.TASK_METRICS
    assert verdict.tokens == Tokens(input=2746, output=9523)
    assert verdict.mcp_calls == 0  # task_metrics' tool_calls_mcp: no transcript or trajectory here
    assert verdict.contaminated is False
    assert verdict.unread == ()


def test_f2_f3_an_mcp_lane_pass_warns_deep_search_unused_and_reports_its_mcp_ratio() -> None:
    verdict = _judge("F2_mcp_pass", MCP)
    assert verdict.manifest_status is ManifestStatus.PASSED and verdict.manifest_reward == 0.3984
    assert verdict.status_tool is StatusToolStatus.COMPLETED_PASS
    assert _rules(verdict) == [("deepsearch_unused", "WARNING"), ("mcp_ratio_report", "INFO")]
    assert verdict.flags[1].message == "MCP ratio: 52.94%"
    assert verdict.mcp_calls == 9
    assert verdict.tokens == Tokens(input=16, output=7585, cache_write=31940, cache_read=306140)
    assert verdict.cost_usd == 0.5424


def test_f3b_an_mcp_lane_that_never_called_mcp_is_critical(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    metrics = json.loads((folder / "task_metrics.json").read_text())
    _write(folder / "task_metrics.json", {**metrics, "tool_calls_mcp": 0})
    verdict = judge_trial(folder, MCP)
    assert verdict is not None
    assert ("mcp_never_used", "CRITICAL") in _rules(verdict)
    assert verdict.mcp_calls == 0


def test_a_null_mcp_count_raises_no_flag_and_stays_unknown(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    metrics = json.loads((folder / "task_metrics.json").read_text())
    _write(folder / "task_metrics.json", {**metrics, "tool_calls_mcp": None})
    verdict = judge_trial(folder, MCP)
    assert verdict is not None
    assert "mcp_never_used" not in [rule for rule, _ in _rules(verdict)]
    assert verdict.mcp_calls is None


def test_without_cost_usd_the_cost_is_cost_reports_formula(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    metrics = json.loads((folder / "task_metrics.json").read_text())
    del metrics["cost_usd"]
    _write(folder / "task_metrics.json", metrics)
    verdict = judge_trial(folder, MCP)
    assert verdict is not None
    # 16×15 + 7585×75 + 31940×18.75 + 306140×1.875 dollars per million tokens, rounded to 4 places
    assert verdict.cost_usd == 1.742 and verdict.cost_source is CostSource.FORMULA


def test_without_task_metrics_the_cost_comes_from_result_json_and_the_cache_is_shown_apart(
    tmp_path: Path,
) -> None:
    folder = _trial(tmp_path, "F1_baseline_pass")
    (folder / "task_metrics.json").unlink()
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None
    assert verdict.tokens == Tokens(input=845972 - 835627, output=9699, cache_read=835627)
    # cost_report.py prices result.json's whole n_input_tokens (cache included) as input
    assert verdict.cost_usd == round((845972 * 15 + 9699 * 75) / 1e6, 4)
    assert verdict.cost_source is CostSource.FORMULA
    assert ("metrics_extraction_failed", "WARNING") in _rules(verdict)


# -- F5–F7: what is not a result ----------------------------------------------------------------------


def test_f5_a_zero_token_trial_is_errored_to_the_manifest_and_a_plain_fail_to_the_status_tool() -> None:
    verdict = _judge("F5_zero_token", BASELINE)
    assert verdict.manifest_status is ManifestStatus.ERRORED
    assert verdict.manifest_rule is ManifestRule.ZERO_TOKEN and verdict.zero_token
    assert verdict.manifest_reward == 0.0
    assert verdict.status_tool is StatusToolStatus.COMPLETED_FAIL
    assert verdict.cost_usd is None and verdict.cost_source is None  # cost_report.py skips it
    assert verdict.tokens.input == 0 and verdict.tokens.output == 0


def test_f6_a_crash_after_three_transcript_lines_is_errored() -> None:
    verdict = _judge("F6_crash", BASELINE)
    assert verdict.manifest_status is ManifestStatus.ERRORED
    assert verdict.manifest_rule is ManifestRule.CRASH
    assert verdict.status_tool is StatusToolStatus.COMPLETED_FAIL
    assert verdict.mcp_calls == 0 and verdict.mcp_tools_available is False
    assert ("agent_never_ran", "CRITICAL") not in _rules(verdict)  # agent_result is there, tokens null


def test_f6_with_sixty_transcript_lines_it_is_a_failure_and_with_a_reward_a_pass(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F6_crash")
    _write(folder / "agent" / "claude-code.txt", '{"type":"assistant"}\n' * 60)
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None and verdict.manifest_status is ManifestStatus.FAILED
    result = json.loads((folder / "result.json").read_text())
    _write(folder / "result.json", {**result, "verifier_result": {"rewards": {"reward": 0.5}}})
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None and verdict.manifest_status is ManifestStatus.PASSED


def test_f6_a_trajectory_is_not_a_crash(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F6_crash")
    _write(folder / "agent" / "trajectory.json", {"steps": []})
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None and verdict.manifest_status is ManifestStatus.FAILED


def test_f7_an_agent_timeout_with_a_score_is_a_timed_out_pass() -> None:
    verdict = _judge("F7_timeout_scored", BASELINE)
    assert verdict.manifest_status is ManifestStatus.PASSED and verdict.manifest_reward == 0.41
    assert verdict.timed_out and verdict.timeout_seconds == 6000.0
    assert verdict.status_tool is StatusToolStatus.COMPLETED_PASS
    assert verdict.fingerprint is not None and verdict.fingerprint.id == "timeout"
    assert verdict.fingerprint.auto_retry is False and verdict.fingerprint.category is Category.D
    assert ("exception_raised", "CRITICAL") in _rules(verdict)


def test_f7_without_a_reward_it_is_errored_to_both(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F7_timeout_scored")
    result = json.loads((folder / "result.json").read_text())
    _write(folder / "result.json", {**result, "verifier_result": {"rewards": {"reward": None}}})
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None
    assert verdict.manifest_status is ManifestStatus.ERRORED
    assert verdict.manifest_rule is ManifestRule.EXCEPTION_WITHOUT_REWARD
    assert verdict.status_tool is StatusToolStatus.ERRORED


# -- F8: the fingerprints, in CSB's order ---------------------------------------------------------------


def test_f8_the_twelve_fingerprints_are_tried_in_csbs_order() -> None:
    assert [entry.id for entry in CATALOG] == [
        "token_refresh_403",
        "verifier_parse_error",
        "api_500",
        "api_rate_limit",
        "context_window_exceeded",
        "timeout",
        "mcp_connection",
        "import_error",
        "docker_compose_fail",
        "permission_denied",
        "git_error",
        "deep_search_polling_only",
    ]
    assert IDS[-2:] == ("unknown", "result_json_corrupt")
    retried = [entry.id for entry in CATALOG if entry.auto_retry]
    assert retried == [
        "token_refresh_403",
        "api_500",
        "api_rate_limit",
        "mcp_connection",
        "deep_search_polling_only",
    ]


@pytest.mark.parametrize(
    ("exception_info", "expected", "matched"),
    [
        (
            {
                "exception_type": "RuntimeError",
                "exception_message": "Docker compose build failed",
                "exception_traceback": "File x.py, line 403",
            },
            "token_refresh_403",
            "403",
        ),
        (
            {"exception_type": "AgentSetupTimeoutError", "exception_message": "429 Too Many Requests"},
            "api_rate_limit",
            "429",
        ),
        ({"exception_message": "prompt is too long"}, "context_window_exceeded", "prompt is too long"),
        (
            {"exception_type": "RuntimeError", "exception_message": "Docker compose build failed"},
            "docker_compose_fail",
            "Docker compose build fail",
        ),
        ({"type": "AgentTimeoutError", "message": "Agent execution timed out"}, "timeout", "Timeout"),
        ("ModuleNotFoundError: No module named 'x'", "import_error", "ModuleNotFoundError"),
        (
            {"exception_message": "Poll for results using sg_deepsearch_read"},
            "deep_search_polling_only",
            "Poll for results using sg_deepsearch_read",
        ),
        (
            {"exception_type": "ValueError", "exception_message": "bad thing"},
            "unknown",
            "ValueError bad thing",
        ),
    ],
)
def test_f8_first_match_wins(exception_info: Any, expected: str, matched: str) -> None:
    fingerprint = fingerprint_error(exception_info)
    assert fingerprint is not None
    assert (fingerprint.id, fingerprint.matched_text) == (expected, matched)


def test_f8_the_catalog_says_what_is_retried_and_a_blank_exception_has_no_fingerprint() -> None:
    context = fingerprint_error({"exception_message": "prompt is too long"})
    assert context is not None and context.auto_retry is False and context.label == "Context window exceeded"
    unknown = fingerprint_error("something new")
    assert unknown is not None and unknown.auto_retry is None and unknown.category is None
    assert fingerprint_error(None) is None and fingerprint_error({"exception_message": "  "}) is None


# -- F9: a job's record is not a trial ------------------------------------------------------------------


def test_f9_a_job_level_result_is_no_trial(tmp_path: Path) -> None:
    folder = tmp_path / "job"
    folder.mkdir()
    shutil.copy(FIXTURES / "result_job_level_partial.json", folder / "result.json")
    assert judge_trial(folder, BASELINE) is None


# -- the trace audit ------------------------------------------------------------------------------------

_INIT = '{"type":"system","subtype":"init","tools":["mcp__sourcegraph__sg_keyword_search"]}'


def _call(name: str) -> str:
    return json.dumps({"type": "assistant", "content": [{"type": "tool_use", "name": name}]})


def test_mcp_calls_count_the_transcript_or_the_trajectory_whichever_is_larger(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F1_baseline_pass")
    lines = [
        _INIT,
        _call("mcp__sourcegraph__sg_keyword_search"),
        _call("mcp__sourcegraph__sg_deepsearch"),
        _call("Bash"),
    ]
    _write(folder / "agent" / "claude-code.txt", "\n".join(lines) + "\n")
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None
    assert (verdict.mcp_calls, verdict.deep_search_calls, verdict.mcp_tools_available) == (2, 1, True)
    # audit_traces.py: a baseline lane that called MCP is contaminated (it checks `baseline` lanes only)
    assert verdict.contaminated
    steps = [
        {"tool_calls": [{"function_name": "mcp__sourcegraph__sg_read_file"}] * 3},
        {"message": "no calls"},
    ]
    _write(folder / "agent" / "trajectory.json", {"steps": steps})
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None and verdict.mcp_calls == 3 and verdict.deep_search_calls == 1


def test_auth_and_mcp_errors_are_found_outside_tool_results_five_at_most(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    tool_result = json.dumps({"type": "tool_result", "content": "token refresh failed"})
    errors = ['{"type":"error","status": 401}'] * 7 + ['{"error": "McpError: gone"}', tool_result]
    _write(folder / "agent" / "claude-code.txt", "\n".join([_INIT, *errors]) + "\n")
    verdict = judge_trial(folder, MCP)
    assert verdict is not None
    assert len(verdict.auth_errors) == 5 and verdict.mcp_errors == ('{"error": "McpError: gone"}',)
    assert verdict.mcp_calls == 0  # read from the transcript, which has none (task_metrics says 9)


# -- bad input: bounded, judged on what could be read, and said -----------------------------------------


def test_a_trajectory_that_is_not_json_is_noted_and_the_transcript_still_counts(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    _write(
        folder / "agent" / "claude-code.txt",
        "\n".join([_INIT, _call("mcp__sourcegraph__sg_read_file")]) + "\n",
    )
    _write(folder / "agent" / "trajectory.json", "{not json")
    verdict = judge_trial(folder, MCP)
    assert verdict is not None and verdict.mcp_calls == 1
    assert len(verdict.unread) == 1 and verdict.unread[0].startswith("trajectory.json is not valid JSON")
    assert verdict.manifest_status is ManifestStatus.PASSED  # the trajectory file exists: not a crash


def test_words_where_numbers_belong_are_noted_not_taken_for_zero(tmp_path: Path) -> None:
    folder = _trial(tmp_path, "F2_mcp_pass")
    metrics = json.loads((folder / "task_metrics.json").read_text())
    _write(folder / "task_metrics.json", {**metrics, "tool_calls_mcp": "0", "cost_usd": "cheap"})
    verdict = judge_trial(folder, MCP)
    assert verdict is not None
    assert verdict.mcp_calls is None  # unknown, so not "never used"
    assert "mcp_never_used" not in [rule for rule, _ in _rules(verdict)]
    assert verdict.cost_source is CostSource.FORMULA
    assert "task_metrics.json tool_calls_mcp is not a number (str)" in verdict.unread
    assert "task_metrics.json cost_usd is not a number (str)" in verdict.unread


def test_a_corrupt_result_is_errored_with_csbs_fingerprint(tmp_path: Path) -> None:
    folder = tmp_path / "trial"
    _write(folder / "result.json", '{"task_name": ')
    verdict = judge_trial(folder, BASELINE)
    assert verdict is not None
    assert (
        verdict.status_tool is StatusToolStatus.ERRORED and verdict.manifest_status is ManifestStatus.ERRORED
    )
    assert verdict.fingerprint is not None and verdict.fingerprint.id == "result_json_corrupt"
    assert verdict.unread[0].startswith("result.json is not valid JSON")


def _lines(path: Path, notes: Notes, **limits: Any) -> list[bytes]:
    blocks = transcript_blocks(path, notes, **limits)
    assert blocks is not None
    return [line for block in blocks for line in block.splitlines(keepends=True)]


def test_a_line_of_megabytes_is_cut_where_csb_cuts_it_and_skipped_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "claude-code.txt"
    call = _call("mcp__sourcegraph__sg_read_file")
    path.write_bytes(b"x" * (3 * LINE_LIMIT) + call.encode() + b"\n" + call.encode() + b"\n")
    notes = Notes()
    read = _lines(path, notes)
    # the call past the cut is not seen; the cut line keeps a newline of its own
    assert [len(line) for line in read] == [LINE_LIMIT + 1, len(call) + 1]
    assert notes.items == []


def test_a_transcript_past_its_size_cap_is_judged_on_its_start_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "claude-code.txt"
    path.write_bytes(b"line\n" * (2 * MIB // 5))
    notes = Notes()
    assert len(_lines(path, notes, limit=MIB)) == -(-MIB // 5)  # whole lines up to the first MiB
    assert notes.items == ["claude-code.txt was read only to its first 1 MiB"]


def test_a_transcript_scan_stops_at_its_deadline_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "claude-code.txt"
    path.write_bytes(b"a line.\n" * (BLOCK // 8 * 3))  # three blocks
    ticks = iter(range(100))
    notes = Notes()
    read = _lines(path, notes, seconds=2, clock=lambda: float(next(ticks)))
    assert len(read) == 2 * BLOCK // 8  # the deadline is looked at once a block
    assert notes.items == [f"claude-code.txt was read only to byte {2 * BLOCK}: its scan ran out of time"]


def test_a_transcript_of_exactly_its_cap_is_read_whole_without_a_note(tmp_path: Path) -> None:
    path = tmp_path / "claude-code.txt"
    path.write_bytes(b"a line.\n" * (BLOCK // 8))
    notes = Notes()
    assert len(_lines(path, notes, limit=BLOCK)) == BLOCK // 8 and notes.items == []


# -- retries follow CSB's error catalog -----------------------------------------------------------------

_STARTED = datetime(2026, 3, 9, 1, 0, tzinfo=UTC)


def _ended(tmp_path: Path, result: dict[str, Any], log: str = "") -> TrialOutcome:
    job = tmp_path / "job"
    _write(job / "t__AbCdEf1" / "result.json", {"task_name": "t", "finished_at": "x", **result})
    log_path = tmp_path / "lane.log"
    log_path.write_text(log)
    return lane_outcome(
        tmp_path,
        "t",
        exit_code=0,
        started_at=_STARTED,
        now=_STARTED + timedelta(minutes=5),
        timeout=timedelta(hours=1),
        log_path=log_path,
        job_dir=job,
        config=BASELINE,
    )


def _raised(kind: str, message: str) -> dict[str, Any]:
    return {"exception_info": {"exception_type": kind, "exception_message": message}}


@pytest.mark.parametrize(
    ("kind", "message", "retried"),
    [
        ("RuntimeError", "OAuth token refresh failed: 403", True),  # token_refresh_403
        ("RuntimeError", "500 Internal Server Error", True),  # api_500
        ("AgentSetupTimeoutError", "429 Too Many Requests", True),  # api_rate_limit (F8)
        ("RuntimeError", "MCP server connection refused", True),  # mcp_connection
        ("RuntimeError", "Poll for results using sg_deepsearch_read", True),  # deep_search_polling_only
        ("AgentSetupTimeoutError", "setup took too long", False),  # timeout: final, though the bot's own
        ("RuntimeError", "prompt is too long", False),  # context_window_exceeded  rules call it infra
        ("RuntimeError", "docker compose build failed", False),  # docker_compose_fail: final by the catalog
        ("ImportError", "No module named x", False),  # import_error
    ],
)
def test_a_fingerprint_the_catalog_retries_is_retried_and_a_final_one_says_so(
    tmp_path: Path, kind: str, message: str, retried: bool
) -> None:
    outcome = _ended(tmp_path, _raised(kind, message))
    assert outcome.status is LaneStatus.ERRORED and outcome.infra is retried
    assert outcome.verdict is not None and outcome.verdict.fingerprint is not None
    fingerprint = outcome.verdict.fingerprint.id
    if retried:
        assert (outcome.reason or "").startswith(f"{fingerprint}: ")
    else:
        assert (outcome.reason or "").endswith(f"(final: CSB's error catalog does not retry {fingerprint})")


def test_an_error_the_catalog_does_not_know_keeps_the_bots_rules(tmp_path: Path) -> None:
    unknown = _raised("DaytonaError", "sandbox gone")  # `unknown` to CSB; infra to the bot
    outcome = _ended(tmp_path, unknown)
    assert outcome.verdict is not None and outcome.verdict.fingerprint is not None
    assert outcome.verdict.fingerprint.id == "unknown" and outcome.infra
    plain = _ended(tmp_path / "b", _raised("NonZeroAgentExitCodeError", "exited 1"))
    assert not plain.infra  # a task outcome, as before
    logged = _ended(tmp_path / "c", _raised("NonZeroAgentExitCodeError", "exited 1"), log="API Error: 429\n")
    assert logged.infra  # the log's rate limit makes it infra, as before


def test_a_zero_token_trial_is_retried_and_a_scored_timeout_never(tmp_path: Path) -> None:
    zero = _ended(tmp_path, json.loads((TRIALS / "F5_zero_token" / "result.json").read_text()))
    assert zero.status is LaneStatus.FAILED and zero.infra
    assert zero.reason == "zero tokens: the account's token failed (the MANIFEST counts it errored)"
    scored = _ended(tmp_path / "b", json.loads((TRIALS / "F7_timeout_scored" / "result.json").read_text()))
    assert scored.status is LaneStatus.PASSED and not scored.infra
