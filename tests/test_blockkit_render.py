"""The playground page's Block Kit renderer (`static/blockkit.js`) on the bot's real cards, run under node.

The cards are built by the bot's own view builders from fixed inputs, so a card that changes shape is
drawn here exactly as the page will draw it; assertions read the produced HTML the way a person reads
the page: its text, its buttons and their labels, its fields.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.models.blocks import (
    Block,
    CheckboxesElement,
    InputBlock,
    NumberInputElement,
    Option,
    PlainTextInputElement,
    StaticSelectElement,
)

from bot.domain.outcome import LaneStatus
from bot.domain.spec import LanePlan, LaneRole, RunParams, RunSpec, TaskRef
from bot.domain.stats import LaneResult, PairOutcome
from bot.playground import APPROVER, CAST, REQUESTER
from bot.slack.views import CardView, approval_card
from bot.slack.views.report import ReportView, paired_report
from bot.slack.views.run_card import RunCardView
from bot.store.models import RequestState

ROOT = Path(__file__).resolve().parents[1]
RENDERER = ROOT / "bot" / "playground" / "static" / "blockkit.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH; the page's renderer is JavaScript")

# Reads [{blocks, ctx} | {mrkdwn, ctx}] on stdin, writes the rendered HTML of each as a JSON list.
RUNNER = """
const bk = require(process.argv[1]);
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((job) =>
    "mrkdwn" in job ? bk.mrkdwn(job.mrkdwn, job.ctx) : bk.renderBlocks(job.blocks, job.ctx));
  process.stdout.write(JSON.stringify(out));
});
"""

USERS = {u.id: u.name for u in CAST}
TASKS = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")
SPEC = RunSpec(
    params=RunParams(suite="csb_sdlc_fix"),
    task_file="benchmarks/suites/csb-example.json",
    task_file_sha256="0" * 64,
    tasks=tuple(
        TaskRef(task_id=t, suite="csb_sdlc_fix", path=f"benchmarks/tasks/csb_sdlc_fix/{t}") for t in TASKS
    ),
    lanes=(
        LanePlan(role=LaneRole.BASELINE, config="baseline-local-direct", mcp_type="none"),
        LanePlan(role=LaneRole.MCP, config="mcp-remote-direct", mcp_type="sourcegraph_full"),
    ),
    parallel=4,
)
DECIDED_AT = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


def render_all(jobs: list[dict[str, Any]]) -> list[str]:
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", RUNNER, str(RENDERER)],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(done.stdout)


def render(blocks: list[Block] | list[dict[str, Any]], **ctx: Any) -> Rendered:
    dicts = [b.to_dict() if isinstance(b, Block) else b for b in blocks]
    (html,) = render_all([{"blocks": dicts, "ctx": {"users": USERS, **ctx}}])
    return Rendered.parse(html)


@dataclass
class Rendered:
    """What a person sees in the markup: all text, the buttons, the section fields, the errors."""

    html: str
    text: str = ""
    buttons: list[dict[str, str]] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, html: str) -> Rendered:
        reader = _Reader()
        reader.feed(html)
        reader.close()
        squash = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
        return cls(
            html=html,
            text=squash("".join(reader.text)),
            buttons=[{**attrs, "label": squash(attrs["label"])} for attrs in reader.buttons],
            fields=[squash(f) for f in reader.captured["bk-field"]],
            errors=[squash(e) for e in reader.captured["bk-error"]],
        )

    @property
    def labels(self) -> list[str]:
        return [b["label"] for b in self.buttons]


_VOID = {"br", "hr", "img", "input", "meta", "link"}


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.buttons: list[dict[str, str]] = []
        self.captured: dict[str, list[str]] = {"bk-field": [], "bk-error": []}
        self._open: list[tuple[str, set[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        classes = set(values.get("class", "").split())
        if values.get("role") == "img" and values.get("aria-label"):
            self.text.append(values["aria-label"])  # a drawn emoji reads as its character
        if tag == "button":
            self.buttons.append({**values, "label": ""})
        for name, found in self.captured.items():
            if name in classes:
                found.append("")
        if tag == "br":
            self.handle_data("\n")
        if tag not in _VOID:
            self._open.append((tag, classes))

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            self._open.pop()
            if tag == "div":
                self.text.append("\n")

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if any(tag == "button" for tag, _ in self._open):
            self.buttons[-1]["label"] += data
        for name, found in self.captured.items():
            if any(name in classes for _, classes in self._open):
                found[-1] += data


def card(state: RequestState, **decision: Any) -> list[Block]:
    view = CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="8bd5fc89514b" + "0" * 52,
        requester=REQUESTER,
        state=state,
        **decision,
    )
    return approval_card(view)


def run_card(state: str, done: int, running: int, queued: int) -> RunCardView:
    counts = {
        "baseline": {LaneStatus.PASSED: 1, LaneStatus.FAILED: done - 1},
        "mcp": {LaneStatus.PASSED: done},
    }
    return RunCardView(
        run_id=7,
        state=state,
        pairs_done=done,
        pairs_total=3,
        lanes_running=running,
        lanes_queued=queued,
        counts=counts,
        started_at=DECIDED_AT,
        now=DECIDED_AT + timedelta(minutes=2, seconds=5),
    )


def report_view() -> ReportView:
    def lane(status: LaneStatus, reward: float | None) -> LaneResult:
        return LaneResult(status=status, reward=reward)

    pairs = [
        PairOutcome(TASKS[0], "csb_sdlc_fix", lane(LaneStatus.PASSED, 1.0), lane(LaneStatus.PASSED, 1.0)),
        PairOutcome(TASKS[1], "csb_sdlc_fix", lane(LaneStatus.FAILED, 0.0), lane(LaneStatus.PASSED, 1.0)),
        PairOutcome(TASKS[2], "csb_sdlc_fix", lane(LaneStatus.FAILED, 0.0), lane(LaneStatus.ERRORED, None)),
    ]
    return ReportView(
        7, ["runs/staging/csb_sdlc_fix_haiku_20260102_030405_7"], "csb_sdlc_fix", SPEC.params.model, pairs
    )


# -- the bot's cards ----------------------------------------------------------------------------------


def test_pending_card_shows_the_five_parameters_and_the_decision_buttons() -> None:
    page = render(card(RequestState.PENDING))
    assert "CSB run request #7" in page.text
    assert '<div class="bk-header-text">CSB run request #7</div>' in page.html
    by_name = {f.split(" ", 1)[0]: f for f in page.fields}
    for name in ("Model", "Suite", "Config", "Parallel", "Category"):
        assert name in by_name, page.fields
    assert by_name["Model"] == "Model anthropic/claude-haiku-4-5-20251001"
    assert by_name["Suite"] == "Suite csb_sdlc_fix from benchmarks/suites/csb-example.json"
    assert "paired" in by_name["Config"] and "mcp-remote-direct" in by_name["Config"]
    assert by_name["Parallel"] == "Parallel 4 slots (default)"
    assert by_name["Category"] == "Category staging"
    assert "<strong>Model</strong>" in page.html
    assert '<code class="bk-code">anthropic/claude-haiku-4-5-20251001</code>' in page.html
    assert "Requested by @alice" in page.text and "<@" not in page.html

    assert page.labels[:2] == ["Approve", "Reject"]
    approve, reject = page.buttons[:2]
    assert approve["data-bk-action-id"] == "approval.approve" and approve["data-bk-value"] == "7:1"
    assert "bk-button-primary" in approve["class"]
    assert reject["data-bk-action-id"] == "approval.reject" and "bk-button-danger" in reject["class"]
    assert approve["data-bk-block-id"] == reject["data-bk-block-id"] != ""


def test_approved_card_names_the_approver_and_the_date_fallback() -> None:
    page = render(card(RequestState.APPROVED, decided_by=APPROVER, decided_at=DECIDED_AT))
    assert "Approved by @bob 2026-01-02 03:04 UTC" in page.text
    assert "<strong>Approved</strong>" in page.html
    assert '<span class="bk-emoji" title=":white_check_mark:" role="img" aria-label="✅"><svg' in page.html
    assert "Approve" not in page.labels and "Reject" not in page.labels
    assert "<!date" not in page.html and "&lt;!date" not in page.html


def test_rejected_card_shows_the_reason() -> None:
    blocks = card(RequestState.REJECTED, decided_by=APPROVER, decided_at=DECIDED_AT, reason="not this week")
    page = render(blocks)
    assert "Rejected by @bob" in page.text and "not this week" in page.text
    assert "❌" in page.text


def test_running_card_shows_progress_counts_and_cancel() -> None:
    view = CardView(
        request_id=7,
        spec=SPEC,
        spec_hash="8bd5fc89514b" + "0" * 52,
        requester=REQUESTER,
        state=RequestState.APPROVED,
        decided_by=APPROVER,
        decided_at=DECIDED_AT,
        run=run_card("running", 1, 2, 2),
    )
    page = render(approval_card(view))
    assert "Running" in page.text and "1/3 pairs done · 2 lanes running · 2 queued" in page.text
    assert "baseline: 1 passed, 0 failed, 0 errored, 0 timeout" in page.text
    assert "elapsed 2 min 05 s" in page.text
    assert page.labels == ["Cancel"]
    (cancel,) = page.buttons
    assert cancel["data-bk-action-id"] == "run.cancel" and cancel["data-bk-value"] == "7"


def test_report_lists_every_task_with_both_lanes() -> None:
    page = render(paired_report(report_view()).blocks)
    assert "Run #7 report: csb_sdlc_fix" in page.text
    assert "pagination-offset-fix-001 baseline failed 0.00 · MCP passed 1.00" in page.text
    assert "slugify-punctuation-fix-001 baseline passed 1.00 · MCP passed 1.00" in page.text
    assert "config-merge-nested-fix-001 baseline failed 0.00 · MCP errored (no reason recorded)" in page.text
    assert page.text.index("MCP-only wins") < page.text.index("Both lanes agree")
    for task in TASKS:
        assert f'<code class="bk-code">{task}</code>' in page.html
    assert page.buttons == []


# -- modals -------------------------------------------------------------------------------------------


def test_modal_inputs_carry_their_ids_values_and_errors() -> None:
    mode = [Option(value=v, text=v) for v in ("paired", "baseline-only", "full-only")]
    yes = Option(value="yes", text="Yes")
    blocks: list[Block] = [
        InputBlock(
            block_id="reason",
            label="Why?",
            hint="The requester sees this.",
            element=PlainTextInputElement(action_id="value", multiline=True, min_length=3),
        ),
        InputBlock(
            block_id="mode",
            label="Mode",
            element=StaticSelectElement(action_id="value", options=mode, initial_option=mode[1]),
        ),
        InputBlock(
            block_id="parallel",
            label="Parallel",
            optional=True,
            element=NumberInputElement(action_id="value", is_decimal_allowed=False, initial_value="4"),
        ),
        InputBlock(
            block_id="dry",
            label="Dry run",
            optional=True,
            element=CheckboxesElement(action_id="value", options=[yes], initial_options=[yes]),
        ),
    ]
    page = render(blocks, surface="modal", errors={"parallel": "A whole number, 1 or more."})
    assert '<textarea class="bk-text-input bk-input" rows="4" data-bk-type="plain_text_input"' in page.html
    assert 'data-bk-block-id="reason"' in page.html and 'minlength="3"' in page.html
    assert '<option value="baseline-only" selected>baseline-only</option>' in page.html
    assert 'type="number"' in page.html and 'value="4"' in page.html
    assert 'type="checkbox" name="dry/value" value="yes" checked' in page.html
    assert "Parallel (optional)" in page.text and "Why?" in page.text
    assert 'data-bk-required="true"' in page.html
    assert page.errors == ["A whole number, 1 or more."]


# -- mrkdwn -------------------------------------------------------------------------------------------


MRKDWN_CASES = [
    ("*bold* and _italic_", "<strong>bold</strong> and <em>italic</em>"),
    ("~gone~", "<del>gone</del>"),
    ("suite `csb_sdlc_fix`", 'suite <code class="bk-code">csb_sdlc_fix</code>'),
    ("csb_sdlc_fix stays", "csb_sdlc_fix stays"),
    ("```\nharbor run <@U0BOB>\n```", '<pre class="bk-pre">harbor run &lt;@U0BOB&gt;\n</pre>'),
    ("by <@U0BOB>", 'by <span class="bk-mention">@bob</span>'),
    ("<@U0NOBODY>", '<span class="bk-mention">@U0NOBODY</span>'),
    (
        "<!date^1767323040^{date_short_pretty} {time}|2026-01-02 03:04 UTC>",
        '<time class="bk-date" datetime="2026-01-02T03:04:00.000Z">2026-01-02 03:04 UTC</time>',
    ),
    (
        "<https://example.org/a?b=1&c=2|the docs>",
        '<a class="bk-link" href="https://example.org/a?b=1&amp;c=2" target="_blank" '
        'rel="noopener noreferrer">the docs</a>',
    ),
    ("<javascript:alert(1)|click>", "click"),
    (":white_check_mark: :x: :warning:", "✅"),
    ("sqlite :memory: stays", "sqlite :memory: stays"),
    ("fish &amp; chips & peas", "fish &amp; chips &amp; peas"),
    ("line one\nline two", "line one<br>line two"),
]


@pytest.fixture(scope="module")
def mrkdwn_rendered() -> dict[str, str]:
    """All cases in one node run."""
    sources = [source for source, _ in MRKDWN_CASES]
    return dict(
        zip(sources, render_all([{"mrkdwn": s, "ctx": {"users": USERS}} for s in sources]), strict=True)
    )


@pytest.mark.parametrize(("source", "expected"), MRKDWN_CASES)
def test_mrkdwn(source: str, expected: str, mrkdwn_rendered: dict[str, str]) -> None:
    assert expected in mrkdwn_rendered[source]


# Emoji codes in the bot's own messages ("… :x: Rejected"); `:memory:` is SQLite's, in no message.
EMOJI_CODE = re.compile(r"""(?<=["' ]):([a-z][a-z0-9_]*):(?=[ "'])""")


def test_every_emoji_the_bot_writes_is_drawn_not_left_to_a_font() -> None:
    """Slack draws emoji as images: on a machine without an emoji font ✅ and ❌ would be the same box."""
    written = {
        code
        for path in (ROOT / "bot").rglob("*.py")
        if "playground" not in path.parts
        for code in EMOJI_CODE.findall(path.read_text())
    } - {"memory"}
    assert {"white_check_mark", "x", "warning", "arrow_forward", "bar_chart"} <= written
    codes = sorted(written)
    drawn = render_all([{"mrkdwn": f":{code}:", "ctx": {}} for code in codes])
    undrawn = [code for code, html in zip(codes, drawn, strict=True) if "<svg" not in html]
    assert undrawn == []
    pictures = [html.split("<svg", 1)[1] for html in drawn]
    assert len(set(pictures)) >= len(codes) - 1  # each its own picture (two codes name one pause sign)


def test_nothing_unescaped_reaches_the_page() -> None:
    hostile = "<img src=x onerror=alert(1)>"
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": hostile}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{hostile}* `{hostile}`"}},
        {"type": "context", "elements": [{"type": "plain_text", "text": hostile}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "<javascript:alert(1)|click me>"}},
        {"type": "no_such_block", "block_id": hostile},
    ]
    page = render(blocks)
    assert "<img" not in page.html and "<script" not in page.html
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.html  # the header's plain text, shown as typed
    assert "click me" in page.text and "javascript:" not in page.html
    assert "[no_such_block block]" in page.text


def test_a_hostile_reason_reads_as_typed_on_the_page_with_no_mention_and_no_link() -> None:
    hostile = "<!channel> <https://x|Click here to approve>"
    page = render(card(RequestState.REJECTED, decided_by=APPROVER, decided_at=DECIDED_AT, reason=hostile))
    assert f"Rejected by @{USERS[APPROVER]}" in page.text and hostile in page.text
    assert "bk-link" not in page.html
    assert page.html.count("bk-mention") == 2  # the approver and the requester, nobody else
