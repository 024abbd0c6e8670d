"""The paired report, the run's final reply: statistics on complete pairs, then every task.

Three Slack limits shape it: 50 blocks, 3000 characters per section text, and a total for the
message's block text that Slack does not document but enforces (`msg_blocks_too_long` from about
13,200 characters, slackapi/bolt-js#2509). The statistics always fit; the task list shows
disagreements first and as many lines as fit, and the rest goes to the CSV in the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    Option,
    SectionBlock,
    StaticSelectElement,
)

from bot.domain.causes import CauseGroup, group_causes, pair_causes
from bot.domain.estimate import RunEstimate
from bot.domain.slack_limits import MAX_HEADER_TEXT, MAX_MESSAGE_BLOCKS, MAX_OPTION_TEXT, MAX_SELECT_OPTIONS
from bot.domain.spec import LaneRole
from bot.domain.states import UNSCORED_LANE_STATES, LaneStatus
from bot.domain.stats import (
    LaneResult,
    LaneTotals,
    PairedSummary,
    PairKind,
    PairOutcome,
    by_suite,
    fmt_p,
    fmt_pts,
    fmt_rate,
    fmt_signed,
    lane_totals,
    order_for_report,
    summarize,
)
from bot.domain.verdict import Category
from bot.slack.ids import ActionId
from bot.slack.views.causes import cause_lines
from bot.slack.views.estimate import estimate_vs_actual
from bot.slack.views.format import CONTEXT_LIMIT, SECTION_LIMIT, clip, code, reward, shown, user
from bot.slack.views.integrity import integrity_lines, invalidity_words
from bot.slack.views.lane_reason import reason_words

MAX_BLOCK_CHARS = 12_000  # under the undocumented ~13,200 of `msg_blocks_too_long`, with a margin
SUITE_CHARS = 7_000  # the per-suite statistics never crowd the task list out entirely
LANE_LABEL = {LaneRole.BASELINE: "baseline", LaneRole.MCP: "MCP"}
PAIRED_GROUPS = (
    ((PairKind.MCP_ONLY,), "MCP-only wins"),
    ((PairKind.BASELINE_ONLY,), "Regressions (baseline only)"),
    ((PairKind.BOTH_PASS, PairKind.BOTH_FAIL), "Both lanes agree"),
    ((PairKind.INVALID,), "Not results by CSB's rules — excluded from the statistics"),
    ((PairKind.INCOMPLETE,), "Errored or incomplete — excluded from the statistics"),
)
CAUSES_SHOWN = 8  # the largest groups; every lane's cause is in the CSV
REASON_SHOWN = 300  # an errored lane's reason in a task line; the CSV has it whole
_TRAILER_CHARS = 80  # room kept for the "… N more tasks" line


@dataclass(frozen=True)
class ReportView:
    """A run that ended. `title` is plain text (it heads the message). `single_lane` names the only
    lane of a baseline-only or full-only run; the other lane of each pair is then ignored. A
    cancelled run says so, who stopped it and why, since its statistics cover only what ran."""

    run_id: int
    output_dirs: Sequence[str]  # where the run's results are, from the checkout root (one per suite): whole
    title: str
    model: str
    pairs: Sequence[PairOutcome]
    single_lane: LaneRole | None = None
    cancelled: bool = False
    stopped_by: str | None = None
    stop_reason: str | None = None
    promotable: bool = False  # a finished staging run: `Promote to official` (authorised at click time)
    estimate: RunEstimate | None = None  # what the approval card showed; None for a request made before
    wall_seconds: float | None = None  # from the run's start to its end


@dataclass(frozen=True)
class ReportMessage:
    blocks: list[Block]
    text: str
    csv_needed: bool  # some task lines did not fit: upload `report_csv(view)` in the thread


def paired_report(view: ReportView) -> ReportMessage:
    overall = None if view.single_lane else summarize(view.pairs)
    curation = integrity_lines(view.pairs, overall, summarize(view.pairs, curated=False)) if overall else []
    causes = cause_lines(failure_causes(view), limit=CAUSES_SHOWN)
    if causes:
        curation += ["*Failures by cause*", *causes]
    head = [*_heading(view), *_statistics(view, overall, curation), DividerBlock()]
    blocks_left = MAX_MESSAGE_BLOCKS - len(head) - 1
    chars_left = MAX_BLOCK_CHARS - _chars(head) - _TRAILER_CHARS
    groups = [
        (label, [task_line(pair, view.single_lane) for pair in pairs]) for label, pairs in _task_groups(view)
    ]
    # two blocks kept under the list: the tasks not run, and the actions (Rerun failed, Promote to official,
    # Rerun a task…)
    task_blocks, hidden = _task_list(groups, blocks_left - 2, chars_left)
    blocks = [*head, *task_blocks]
    if hidden:
        more = f"… {hidden} more {_tasks(hidden)} in the attached CSV"
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=more)]))
    return ReportMessage(blocks=blocks, text=_fallback_text(view, overall), csv_needed=hidden > 0)


def failure_causes(view: ReportView) -> list[CauseGroup]:
    """The run's errored, timed-out and not-counted lanes, grouped by cause (the CSV and Rerun use it too)."""
    roles = (view.single_lane,) if view.single_lane else (LaneRole.BASELINE, LaneRole.MCP)
    items = []
    for pair in view.pairs:
        lanes = {role.value: (_lane(pair, role).status, _lane(pair, role).verdict) for role in roles}
        items += pair_causes(pair.task_id, lanes)
    return group_causes(items)


def task_order(view: ReportView) -> list[PairOutcome]:
    """The pairs in the order the report lists them (the CSV uses it too)."""
    return [pair for _, pairs in _task_groups(view) for pair in pairs]


def task_line(pair: PairOutcome, single_lane: LaneRole | None) -> str:
    roles = (single_lane,) if single_lane else (LaneRole.BASELINE, LaneRole.MCP)
    parts = [_lane_words(role, _lane(pair, role)) for role in roles]
    line = f"{code(pair.task_id, 150)}  " + " · ".join(parts)
    if not single_lane and pair.kind is PairKind.INVALID:
        line += f" — {invalidity_words(pair)}"
    return line


def _heading(view: ReportView) -> list[Block]:
    ended = " (cancelled)" if view.cancelled else ""
    title = f"Run #{view.run_id} report{ended}: {view.title}"
    folders = ", ".join(code(folder, 1000) for folder in view.output_dirs)
    context = f"{code(view.model, 200)} · output {folders}"
    if view.single_lane:
        context += f" · {LANE_LABEL[view.single_lane]} lane only, so no paired statistics"
    blocks: list[Block] = [
        HeaderBlock(text=clip(title, MAX_HEADER_TEXT)),
        ContextBlock(elements=[MarkdownTextObject(text=clip(context, CONTEXT_LIMIT))]),
    ]
    if view.cancelled:
        by = f" by {user(view.stopped_by)}" if view.stopped_by else ""
        why = f": {shown(view.stop_reason, 500)}" if view.stop_reason else ""
        note = (
            f":octagonal_sign: *Cancelled*{by}{why}. Lanes that did not run are `cancelled`; "
            "the figures below cover only what ran."
        )
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip(note, SECTION_LIMIT))))
    against = estimate_vs_actual(view.estimate, _cost(view.pairs), view.wall_seconds)
    if against:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=clip(against, CONTEXT_LIMIT))]))
    return blocks


def _cost(pairs: Sequence[PairOutcome]) -> float | None:
    """What the run's lanes recorded, summed; None when none reported a cost."""
    costs = [
        lane.cost_usd for pair in pairs for lane in (pair.baseline, pair.mcp) if lane.cost_usd is not None
    ]
    return sum(costs) if costs else None


def _statistics(view: ReportView, overall: PairedSummary | None, curation: list[str]) -> list[Block]:
    if overall is None:
        text = _lane_text(view, "*Overall*", view.pairs)
    else:
        text = _paired_text("*Overall*", overall)
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)))]
    if curation:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=clip("\n".join(curation), SECTION_LIMIT))))
    suites = by_suite(view.pairs)
    if len(suites) < 2:
        return blocks
    texts = [
        _lane_text(view, f"*{code(suite, 100)}*", pairs)
        if view.single_lane
        else _suite_text(suite, summarize(pairs))
        for suite, pairs in suites.items()
    ]
    packed, fitted = _pack(texts, sep="\n\n", max_sections=MAX_MESSAGE_BLOCKS // 4, max_chars=SUITE_CHARS)
    if fitted < len(texts):
        packed.append(f"… {len(texts) - fitted} more suites not shown")
    return [*blocks, *(SectionBlock(text=MarkdownTextObject(text=text)) for text in packed)]


def _paired_text(label: str, s: PairedSummary) -> str:
    head = f"{label} · {s.n} complete {_pairs(s.n)}"
    if s.excluded:
        head += f" · {s.excluded} errored or incomplete, excluded"
    if s.invalid:
        head += f" · {s.invalid} not results by CSB's rules, excluded"
    if not s.n or s.diff_pts is None:
        return f"{head}\nNo complete pairs, so no statistics."
    return "\n".join(
        [
            head,
            f"Pass rate: baseline {fmt_rate(s.baseline.k, s.n)} · MCP {fmt_rate(s.mcp.k, s.n)}"
            f" · *{fmt_pts(s.diff_pts)}*",
            f"Pairs: both pass {s.both_pass} · MCP only {s.mcp_only} · baseline only {s.baseline_only}"
            f" · both fail {s.both_fail} · McNemar {fmt_p(s.p_value)}",
            f"Mean reward: baseline {reward(s.baseline.mean_reward)} · MCP {reward(s.mcp.mean_reward)}"
            f" · difference {_diff(s)}",
            f"Usage: baseline {_usage(s.baseline)} · MCP {_usage(s.mcp)}",
        ]
    )


def _suite_text(suite: str, s: PairedSummary) -> str:
    """The overall statistics in fewer words, so all 20 suites of csb-v2-dual264 fit beside the tasks."""
    head = f"*{code(suite, 100)}* · {s.n} {_pairs(s.n)}"
    if s.excluded or s.invalid:
        head += f" ({s.excluded + s.invalid} excluded)"
    if not s.n or s.diff_pts is None:
        return f"{head} · no statistics"
    b, m = s.baseline, s.mcp
    return "\n".join(
        [
            f"{head} · baseline {fmt_rate(b.k, s.n)} · MCP {fmt_rate(m.k, s.n)} · *{fmt_pts(s.diff_pts)}*",
            f"both pass {s.both_pass} · MCP only {s.mcp_only} · baseline only {s.baseline_only}"
            f" · both fail {s.both_fail} · {fmt_p(s.p_value)}",
            f"reward baseline {reward(b.mean_reward)} · MCP {reward(m.mean_reward)} · {_diff(s)}",
            f"usage baseline {_usage(b, short=True)} · MCP {_usage(m, short=True)}",
        ]
    )


def _lane_text(view: ReportView, label: str, pairs: Sequence[PairOutcome]) -> str:
    role = view.single_lane or LaneRole.BASELINE
    results = [_lane(pair, role) for pair in pairs]
    totals = lane_totals(results)
    excluded = len(results) - totals.n
    head = f"{label} · {totals.n} scored {_tasks(totals.n)}"
    if excluded:
        head += f" · {excluded} errored or incomplete, excluded"
    return "\n".join(
        [
            head,
            f"Pass rate: {LANE_LABEL[role]} {fmt_rate(totals.k, totals.n)}"
            f" · mean reward {reward(totals.mean_reward)}",
            f"Usage: {_usage(totals)}",
        ]
    )


def _task_groups(view: ReportView) -> list[tuple[str, list[PairOutcome]]]:
    if view.single_lane:
        role = view.single_lane
        results = [(pair, _lane(pair, role)) for pair in view.pairs]
        groups = [
            ("Passed", [p for p, r in results if r.passed]),
            ("Failed", [p for p, r in results if r.scored and not r.passed]),
            ("Errored or incomplete — excluded from the pass rate", [p for p, r in results if not r.scored]),
        ]
    else:
        ordered = order_for_report(view.pairs)
        groups = [(label, [p for p in ordered if p.kind in kinds]) for kinds, label in PAIRED_GROUPS]
    return [(label, pairs) for label, pairs in groups if pairs]


def _task_list(
    groups: list[tuple[str, list[str]]], blocks_left: int, chars_left: int
) -> tuple[list[Block], int]:
    """Section blocks for as many task lines as fit, each group under its label; and how many did not."""
    texts: list[str] = []
    total = sum(len(task_lines) for _, task_lines in groups)
    listed = 0
    for label, task_lines in groups:
        lines = [f"*{label}* ({len(task_lines)})", *task_lines]
        packed, fitted = _pack(lines, sep="\n", max_sections=blocks_left - len(texts), max_chars=chars_left)
        if fitted < 2:  # not even one task under the label
            break
        texts += packed
        chars_left -= sum(len(text) for text in packed)
        listed += fitted - 1
        if fitted < len(lines):
            break
    return [SectionBlock(text=MarkdownTextObject(text=text)) for text in texts], total - listed


def _pack(items: list[str], *, sep: str, max_sections: int, max_chars: int) -> tuple[list[str], int]:
    """Texts of at most SECTION_LIMIT characters holding a prefix of `items`, within both budgets.

    Returns the texts and how many items they hold; stops at the first item that does not fit, so
    the order is kept.
    """
    texts: list[str] = []
    used = 0
    for count, item in enumerate(items):
        item = clip(item, SECTION_LIMIT)
        joined = f"{texts[-1]}{sep}{item}" if texts else ""
        if texts and len(joined) <= SECTION_LIMIT and used + len(sep) + len(item) <= max_chars:
            texts[-1] = joined
            used += len(sep) + len(item)
        elif len(texts) < max_sections and used + len(item) <= max_chars:
            texts.append(item)
            used += len(item)
        else:
            return texts, count
    return texts, len(items)


def _lane(pair: PairOutcome, role: LaneRole) -> LaneResult:
    return pair.baseline if role is LaneRole.BASELINE else pair.mcp


def _lane_words(role: LaneRole, result: LaneResult) -> str:
    if result.status in UNSCORED_LANE_STATES:  # no reward: say why instead
        why = shown(reason_words(result) or "no reason recorded", REASON_SHOWN)
        return f"{LANE_LABEL[role]} {result.status.value} ({why})"
    return f"{LANE_LABEL[role]} {result.status.value} {reward(result.reward)}"


def _diff(s: PairedSummary) -> str:
    if s.mean_diff is None:
        return "—"
    text = fmt_signed(s.mean_diff, 2)
    if s.ci is not None:
        text += f" (95 % CI {fmt_signed(s.ci[0], 2)} to {fmt_signed(s.ci[1], 2)})"
    return text


def _usage(totals: LaneTotals, *, short: bool = False) -> str:
    inp, out = totals.input_tokens, totals.output_tokens
    if inp is None and out is None:
        tokens = "tokens not reported"
    elif short:
        tokens = f"{_count((inp or 0) + (out or 0))} tokens"
    else:
        tokens = f"{_count(inp)} in / {_count(out)} out tokens"
    cost = "cost not reported" if totals.cost_usd is None else f"${totals.cost_usd:,.2f}"
    return f"{tokens}, {cost}"


def _count(value: int | None) -> str:
    if value is None:
        return "—"
    for size, unit in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return str(value)


def _fallback_text(view: ReportView, s: PairedSummary | None) -> str:
    ended = "cancelled" if view.cancelled else "finished"
    head = f"Run #{view.run_id} {ended} ({shown(view.title, 200)})"
    if view.single_lane or s is None:
        role = view.single_lane or LaneRole.BASELINE
        totals = lane_totals(_lane(pair, role) for pair in view.pairs)
        return f"{head}: {LANE_LABEL[role]} {fmt_rate(totals.k, totals.n)} passed"
    if not s.n or s.diff_pts is None:
        return f"{head}: no complete pairs"
    return (
        f"{head}: baseline {fmt_rate(s.baseline.k, s.n)} · MCP {fmt_rate(s.mcp.k, s.n)}"
        f" ({fmt_pts(s.diff_pts)}, {fmt_p(s.p_value)}) on {s.n} complete {_pairs(s.n)}"
    )


def _chars(blocks: list[Block]) -> int:
    """Characters of text in the blocks: our measure for the undocumented `msg_blocks_too_long` total."""
    return sum(_text_chars(block.to_dict()) for block in blocks)


def _text_chars(node: Any) -> int:
    if isinstance(node, dict):
        return sum(len(v) if k == "text" and isinstance(v, str) else _text_chars(v) for k, v in node.items())
    if isinstance(node, list):
        return sum(_text_chars(item) for item in node)
    return 0


def _pairs(n: int) -> str:
    return "pair" if n == 1 else "pairs"


def _tasks(n: int) -> str:
    return "task" if n == 1 else "tasks"


def rerun_button(view: ReportView) -> list[Block]:
    """`Rerun failed` under the report, when some lane failed of a cause a rerun as is can fix (CSB's
    category A); the click reruns those tasks alone, never a genuine failure (D) or one whose setup or
    verifier must be fixed first (B, C: `/csb rerun <run> --only <cause>` once fixed). Beside it,
    `Promote to official` under a finished staging run's report. Under a run cancelled or drained part
    way, "N tasks not run" and `Run the rest`: a request over exactly the tasks with a lane that never
    ran to an end (CSB's "don't rerun completed tasks; build a subset of the remainder"). Beside the
    buttons, `Rerun a task…` (`task_select`)."""
    blocks: list[Block] = []
    missing = not_run(view)
    if missing:
        text = f"*{len(missing)} {_tasks(len(missing))} not run*: {_shown_ids(missing)}"
        button = ButtonElement(text="Run the rest", action_id=ActionId.RUN_REST, value=str(view.run_id))
        blocks.append(
            SectionBlock(
                block_id=f"rest:{view.run_id}",
                text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)),
                accessory=button,
            )
        )
    promote = (
        ButtonElement(text="Promote to official", action_id=ActionId.PROMOTE, value=str(view.run_id))
        if view.promotable
        else None
    )
    buttons = [
        element for element in (_rerun_element(view), promote, task_select(view)) if element is not None
    ]
    if buttons:
        blocks.append(ActionsBlock(block_id=f"report:{view.run_id}", elements=buttons))
    return blocks


def task_select(view: ReportView) -> StaticSelectElement | None:
    """`Rerun a task…`: the report's tasks, those that did not pass first (at most Slack's 100 options);
    choosing one requests `/csb run --tasks <it> --suite <its suite>` with the run's parameters. An
    option's value is `<run id>:<pair index>`, checked against the run's lanes at the click."""
    if not view.pairs:
        return None
    roles = (view.single_lane,) if view.single_lane else (LaneRole.BASELINE, LaneRole.MCP)
    order = sorted(
        range(len(view.pairs)),
        key=lambda i: (all(_lane(view.pairs[i], role).passed for role in roles), i),
    )
    options = [
        Option(
            value=f"{view.run_id}:{index}",
            text=clip(view.pairs[index].task_id, MAX_OPTION_TEXT),
            description=clip(view.pairs[index].suite, MAX_OPTION_TEXT),
        )
        for index in order[:MAX_SELECT_OPTIONS]
    ]
    return StaticSelectElement(action_id=ActionId.RERUN_TASK, placeholder="Rerun a task…", options=options)


def not_run(view: ReportView) -> list[str]:
    """The tasks with a lane (of those the run has) that was cancelled before it ran to an end."""
    roles = (view.single_lane,) if view.single_lane else (LaneRole.BASELINE, LaneRole.MCP)
    return [
        pair.task_id
        for pair in view.pairs
        if any(_lane(pair, role).status is LaneStatus.CANCELLED for role in roles)
    ]


def _shown_ids(task_ids: list[str], listed: int = 10) -> str:
    text = ", ".join(code(task_id, 150) for task_id in task_ids[:listed])
    rest = len(task_ids) - listed
    return text + (f" and {rest} more" if rest > 0 else "")


def _rerun_element(view: ReportView) -> ButtonElement | None:
    if not any(group.cause.category is Category.A for group in failure_causes(view)):
        return None
    return ButtonElement(text="Rerun failed", action_id=ActionId.RERUN_FAILED, value=str(view.run_id))


def report_dm(view: ReportView, summary: str, thread_url: str) -> tuple[str, list[Block]]:
    """The requester's DM: the report's one-line summary, a link to the run's thread, and the same
    `Rerun failed` button as under the report (the click is authorised like any other). It promises
    the CSV only when the report's task list did not fit, which is when the report posts one."""
    attached = " and the CSV" if paired_report(view).csv_needed else ""
    text = f"{summary}. <{thread_url}|Open the run's thread> for the report{attached}."
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_LIMIT)))]
    button = _rerun_element(view)
    if button:
        blocks.append(ActionsBlock(block_id=f"dm:{view.run_id}", elements=[button]))
    return text, blocks


def thread_url(channel_id: str, ts: str) -> str:
    """A link to a message (the card, whose thread holds the run): Slack's archive form of its ts."""
    return f"https://slack.com/archives/{channel_id}/p{ts.replace('.', '')}"
