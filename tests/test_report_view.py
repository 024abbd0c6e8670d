"""The paired report against golden files, and against Slack's limits directly.

Golden files live in `tests/golden/` and are compared byte for byte. After an intended change to
the report, rewrite them and review the diff:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_report_view.py
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from bot.domain.outcome import LaneStatus
from bot.domain.reason import LaneReason, ReasonKind
from bot.domain.spec import LaneRole
from bot.domain.stats import LaneResult, PairOutcome
from bot.playground import check_message_blocks
from bot.slack.views.report import (
    MAX_BLOCK_CHARS,
    ReportMessage,
    ReportView,
    paired_report,
    report_dm,
    task_line,
    task_order,
    task_select,
)
from bot.slack.views.report_csv import COLUMNS, report_csv

GOLDEN = Path(__file__).resolve().parent / "golden"
# What the bot records for lanes that end without a score (exception type and message, or what it saw).
REASONS = {
    LaneStatus.ERRORED: LaneReason(
        ReasonKind.EXCEPTION, "Daytona sandbox did not start", exception_type="RuntimeError"
    ),
    LaneStatus.TIMEOUT: LaneReason(
        ReasonKind.NO_RESULT_IN_TIME,
        "no trial result after 1 h 00 min (limit 1 h 00 min)",
        log_path="runs/x/task.log",
    ),
}
MODEL = "anthropic/claude-haiku-4-5-20251001"
P, F, E = LaneStatus.PASSED, LaneStatus.FAILED, LaneStatus.ERRORED
# The suites of csb-v2-dual264 and their task counts (the fixture suite file's `suites`).
DUAL264 = {
    "csb_org_compliance": 13,
    "csb_org_crossorg": 12,
    "csb_org_crossrepo": 11,
    "csb_org_crossrepo_tracing": 11,
    "csb_org_domain": 11,
    "csb_org_incident": 13,
    "csb_org_migration": 25,
    "csb_org_onboarding": 11,
    "csb_org_org": 11,
    "csb_org_platform": 13,
    "csb_org_security": 13,
    "csb_sdlc_debug": 5,
    "csb_sdlc_design": 11,
    "csb_sdlc_document": 11,
    "csb_sdlc_feature": 23,
    "csb_sdlc_fix": 16,
    "csb_sdlc_refactor": 18,
    "csb_sdlc_secure": 13,
    "csb_sdlc_test": 12,
    "csb_sdlc_understand": 11,
}
_WORDS = (
    "config-trace",
    "users-can-delete-fix",
    "query-plan-regression-debug",
    "imports",
    "dep-trace",
    "audit",
)


def _lane(
    status: LaneStatus, reward: float | None, tokens: tuple[int, int] | None = None, cost: float | None = None
):
    input_tokens, output_tokens = tokens if tokens else (None, None)
    return LaneResult(status, reward, input_tokens, output_tokens, cost, REASONS.get(status))


def _seven_task_view() -> ReportView:
    """Every kind of pair once or twice, over three suites, with partial usage reporting."""
    pairs = [
        PairOutcome(
            "teleport-users-can-delete-fix-001",
            "csb_sdlc_fix",
            _lane(F, 0.0, (8_763_061, 496), 1.92),
            _lane(P, 1.0, (5_120_400, 1_310), 1.31),
        ),
        PairOutcome(
            "ansible-abc-imports-fix-001",
            "csb_sdlc_fix",
            _lane(P, 1.0, (2_400_118, 870), 0.61),
            _lane(F, 0.0, (3_010_772, 1_022), 0.8),
        ),
        PairOutcome(
            "ccx-crossorg-062",
            "csb_org_crossorg",
            _lane(F, None, (612_000, 301)),
            _lane(P, 0.83, (701_555, 412)),
        ),
        PairOutcome("ccx-crossorg-121", "csb_org_crossorg", _lane(P, 1.0), _lane(P, 1.0)),
        PairOutcome(
            "tidb-query-plan-regression-debug-001",
            "csb_sdlc_debug",
            _lane(F, 0.0, (1_004_220, 2_048), 0.27),
            _lane(F, 0.0, (990_310, 1_877), 0.33),
        ),
        PairOutcome("ccx-dep-trace-106", "csb_org_crossorg", _lane(P, 1.0), _lane(E, None)),
        PairOutcome(
            "ccx-platform-091",
            "csb_org_crossorg",
            _lane(LaneStatus.QUEUED, None),
            _lane(LaneStatus.CANCELLED, None),
        ),
    ]
    return ReportView(
        run_id=42,
        output_dirs=["runs/official/csb_v2_dual264_haiku_20260301_101500_42"],
        title="csb-v2-dual264 (3 suites)",
        model=MODEL,
        pairs=pairs,
    )


def _random_lane(rng: random.Random, pass_rate: float) -> LaneResult:
    roll = rng.random()
    tokens = (rng.randrange(200_000, 9_000_000), rng.randrange(200, 5_000))
    cost = round(rng.uniform(0.1, 3.0), 2) if rng.random() < 0.7 else None
    if roll < 0.03:
        return _lane(E, None, tokens, cost)
    if roll < 0.04:
        return _lane(LaneStatus.TIMEOUT, None)
    if rng.random() < pass_rate:
        return _lane(P, 1.0 if rng.random() < 0.8 else round(rng.uniform(0.3, 0.99), 2), tokens, cost)
    return _lane(F, 0.0, tokens, cost)


def _dual264_view() -> ReportView:
    """A whole csb-v2-dual264 run, generated from a fixed seed: too many tasks for one message."""
    rng = random.Random(264)
    pairs = []
    for suite, count in DUAL264.items():
        short = suite.removeprefix("csb_").replace("_", "-")
        for i in range(count):
            task_id = f"{short}-{rng.choice(_WORDS)}-{i + 1:03d}"
            pairs.append(PairOutcome(task_id, suite, _random_lane(rng, 0.45), _random_lane(rng, 0.6)))
    return ReportView(
        run_id=7,
        output_dirs=["runs/official/csb_v2_dual264_sonnet_20260302_083000_7"],
        title="csb-v2-dual264",
        model="anthropic/claude-sonnet-4-6",
        pairs=pairs,
    )


def _baseline_only_view() -> ReportView:
    """A baseline-only run; the MCP lanes are the clean counterparts from earlier, and are not shown."""
    counterpart = _lane(P, 1.0)
    pairs = [
        PairOutcome(
            "ccx-config-trace-010",
            "csb_org_crossrepo_tracing",
            _lane(P, 1.0, (400_000, 250), 0.12),
            counterpart,
        ),
        PairOutcome(
            "ccx-dep-trace-271", "csb_org_crossrepo_tracing", _lane(F, 0.0, (512_300, 310), 0.15), counterpart
        ),
        PairOutcome(
            "ccx-incident-032", "csb_org_crossrepo_tracing", _lane(P, 0.5, (380_100, 198), 0.11), counterpart
        ),
        PairOutcome(
            "ccx-incident-034", "csb_org_crossrepo_tracing", _lane(LaneStatus.TIMEOUT, None), counterpart
        ),
    ]
    return ReportView(
        run_id=9,
        output_dirs=["runs/official/csb_org_crossrepo_tracing_haiku_20260303_120000_9"],
        title="csb_org_crossrepo_tracing",
        model=MODEL,
        pairs=pairs,
        single_lane=LaneRole.BASELINE,
    )


VIEWS = {
    "report_paired_7": _seven_task_view,
    "report_paired_264": _dual264_view,
    "report_baseline_only": _baseline_only_view,
}


def _as_json(message: ReportMessage) -> str:
    data = {
        "text": message.text,
        "csv_needed": message.csv_needed,
        "blocks": [block.to_dict() for block in message.blocks],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _assert_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    hint = "run `UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_report_view.py` and review the diff"
    assert path.exists(), f"tests/golden/{name} is missing: {hint}"
    assert actual == path.read_text(encoding="utf-8"), f"tests/golden/{name} differs: if intended, {hint}"


def _texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [
            t for k, v in node.items() for t in ([v] if k == "text" and isinstance(v, str) else _texts(v))
        ]
    if isinstance(node, list):
        return [t for item in node for t in _texts(item)]
    return []


def _assert_within_slack_limits(message: ReportMessage) -> None:
    blocks = [block.to_dict() for block in message.blocks]
    assert check_message_blocks(blocks) == []
    assert 0 < len(blocks) <= 50
    texts = _texts(blocks)
    assert all(0 < len(text) <= 3000 for text in texts)
    assert sum(len(text) for text in texts) <= MAX_BLOCK_CHARS
    assert message.text.strip()


@pytest.fixture(scope="module")
def reports() -> dict[str, tuple[ReportView, ReportMessage]]:
    """Built once: the bootstrap over 264 pairs and 20 suites takes a moment."""
    return {name: (make(), paired_report(make())) for name, make in VIEWS.items()}


@pytest.mark.parametrize("name", list(VIEWS))
def test_report_matches_golden(name: str, reports: dict[str, tuple[ReportView, ReportMessage]]) -> None:
    _assert_golden(f"{name}.json", _as_json(reports[name][1]))


@pytest.mark.parametrize("name", ["report_paired_7", "report_baseline_only"])
def test_csv_matches_golden(name: str, reports: dict[str, tuple[ReportView, ReportMessage]]) -> None:
    _assert_golden(f"{name}.csv", report_csv(reports[name][0]))


@pytest.mark.parametrize("name", list(VIEWS))
def test_report_fits_slack(name: str, reports: dict[str, tuple[ReportView, ReportMessage]]) -> None:
    _assert_within_slack_limits(reports[name][1])


def test_seven_task_report_lists_every_task_in_report_order(reports) -> None:
    view, message = reports["report_paired_7"]
    body = "\n".join(_texts([block.to_dict() for block in message.blocks]))
    assert not message.csv_needed
    labels = [
        "*MCP-only wins* (2)",
        "*Regressions (baseline only)* (1)",
        "*Both lanes agree* (2)",
        "*Errored or incomplete — excluded from the statistics* (2)",
    ]
    assert [body.index(label) for label in labels] == sorted(body.index(label) for label in labels)
    positions = [body.index(task_line(pair, view.single_lane)) for pair in task_order(view)]
    assert positions == sorted(positions)
    assert [p.task_id for p in task_order(view)] == [
        "teleport-users-can-delete-fix-001",
        "ccx-crossorg-062",
        "ansible-abc-imports-fix-001",
        "ccx-crossorg-121",
        "tidb-query-plan-regression-debug-001",
        "ccx-dep-trace-106",
        "ccx-platform-091",
    ]
    assert "`ccx-platform-091`  baseline queued — · MCP cancelled —" in body
    assert "5 complete pairs · 2 errored or incomplete, excluded" in body
    assert "Pass rate: baseline 2/5 (40.0 %) · MCP 3/5 (60.0 %) · *+20.0 pts*" in body
    assert "both pass 1 · MCP only 2 · baseline only 1 · both fail 1 · McNemar p = 1.00" in body


def test_large_run_shows_disagreements_first_and_sends_the_rest_to_csv(reports) -> None:
    view, message = reports["report_paired_264"]
    assert message.csv_needed
    body = "\n".join(_texts([block.to_dict() for block in message.blocks]))
    ordered = task_order(view)
    shown = [pair for pair in ordered if task_line(pair, view.single_lane) in body]
    assert shown == ordered[: len(shown)]  # a prefix of the report order: wins, then regressions, …
    assert 0 < len(shown) < len(ordered)
    assert body.endswith(f"… {len(ordered) - len(shown)} more tasks in the attached CSV")
    assert all(f"*`{suite}`* · " in body for suite in DUAL264)  # every suite's statistics fit
    assert "more suites" not in body


def test_csv_holds_every_task_in_report_order(reports) -> None:
    view, _ = reports["report_paired_264"]
    rows = list(csv.DictReader(io.StringIO(report_csv(view))))
    assert tuple(rows[0]) == COLUMNS
    assert [row["task_id"] for row in rows] == [pair.task_id for pair in task_order(view)]
    assert {row["baseline_status"] for row in rows} <= {s.value for s in LaneStatus}


def test_baseline_only_report_has_no_paired_statistics(reports) -> None:
    _, message = reports["report_baseline_only"]
    body = "\n".join(_texts([block.to_dict() for block in message.blocks]))
    assert "McNemar" not in body and "MCP " not in body.replace("no paired statistics", "")
    assert "Pass rate: baseline 2/3 (66.7 %)" in body
    assert "`ccx-incident-034`  baseline timeout (no trial result after 1 h 00 min" in body
    assert message.text == "Run #9 finished (csb_org_crossrepo_tracing): baseline 2/3 (66.7 %) passed"


def test_full_only_report_shows_the_mcp_lane() -> None:
    pairs = [PairOutcome("t1", "s", _lane(LaneStatus.QUEUED, None), _lane(P, 1.0))]
    view = ReportView(1, ["d"], "s", MODEL, pairs, single_lane=LaneRole.MCP)
    message = paired_report(view)
    body = "\n".join(_texts([block.to_dict() for block in message.blocks]))
    assert "`t1`  MCP passed 1.00" in body and "baseline queued" not in body
    assert report_csv(view).splitlines()[1] == "t1,s,,,passed,1.0,,,,,," + "," * (len(COLUMNS) - 12)


@pytest.mark.parametrize(
    "pairs",
    [
        [],
        [PairOutcome("t", "s", _lane(LaneStatus.RUNNING, None), _lane(LaneStatus.QUEUED, None))],
        [PairOutcome("x" * 4000, "s", _lane(P, 1.0), _lane(F, 0.0))],
        [
            PairOutcome(f"task-{i:04d}", f"suite_{i % 60:02d}", _lane(P, 1.0), _lane(F, 0.0))
            for i in range(600)
        ],
    ],
    ids=["empty", "nothing-finished", "absurd-task-id", "60-suites-600-tasks"],
)
def test_edge_cases_stay_within_limits(pairs: list[PairOutcome]) -> None:
    for single_lane in (None, LaneRole.BASELINE):
        view = ReportView(3, ["d"], "t" * 300, MODEL, pairs, single_lane=single_lane)
        message = paired_report(view)
        _assert_within_slack_limits(message)
        assert message.csv_needed == (len(pairs) == 600)


def test_the_dm_promises_the_csv_exactly_when_the_report_posts_one(reports) -> None:
    for name in ("report_paired_264", "report_paired_7", "report_baseline_only"):
        view, message = reports[name]
        text, _ = report_dm(view, message.text, "https://slack.com/archives/C0PLAY/p1")
        assert ("the CSV" in text) == message.csv_needed, (name, text)
        assert "for the report" in text


def test_rerun_a_task_lists_the_tasks_that_did_not_pass_first_within_slacks_limits() -> None:
    view = _dual264_view()  # 264 tasks: more than a select's 100 options
    select = task_select(view)
    assert select is not None
    drawn = select.to_dict()
    assert drawn["action_id"] == "run.rerun_task" and drawn["placeholder"]["text"] == "Rerun a task…"
    options = drawn["options"]
    assert len(options) == 100
    both_passed = [p.baseline.passed and p.mcp.passed for p in view.pairs]
    chosen = [int(o["value"].split(":")[1]) for o in options]
    assert [o["value"].split(":")[0] for o in options] == ["7"] * 100
    assert [both_passed[i] for i in chosen] == sorted(both_passed[i] for i in chosen)  # not passed first
    assert chosen == sorted(chosen, key=lambda i: (both_passed[i], i))  # then in the report's task order
    assert all(view.pairs[i].task_id == o["text"]["text"] for i, o in zip(chosen, options, strict=True))
    long = PairOutcome("t" * 128, "s", _lane(LaneStatus.FAILED, 0.0), _lane(LaneStatus.PASSED, 1.0))
    one = task_select(ReportView(run_id=1, output_dirs=["r"], title="t", model="m", pairs=[long]))
    assert one is not None and len(one.to_dict()["options"][0]["text"]["text"]) <= 75
    assert not check_message_blocks([{"type": "actions", "elements": [one.to_dict()]}])
    too_many = {**drawn, "options": [*options, {**options[0], "value": "7:999"}]}  # 101: Slack refuses
    assert check_message_blocks([{"type": "actions", "elements": [too_many]}])
    assert task_select(ReportView(run_id=1, output_dirs=["r"], title="t", model="m", pairs=[])) is None
