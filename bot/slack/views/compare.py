"""The words of `/csb compare`, `/csb runs` and the report's line against official.

A − B throughout: B is the reference, so "regression" is B passed and A failed. Lists are cut at
`LISTED` entries with a count of the rest, so a reply stays one readable message.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject

from bot.domain.compare import OVERALL, Comparison, FlipKind, GroupStats, LaneChoice, Pair, Side
from bot.domain.run_summary import Headline
from bot.domain.stats import fmt_p, fmt_pts, fmt_signed
from bot.services.compare import RunLine
from bot.slack.views.format import MESSAGE_TEXT_LIMIT, SECTION_LIMIT, clip, code, reward, shown, when

LISTED = 15
_FLIP_TITLES = {
    FlipKind.REGRESSION: "Regressions (passed → failed)",
    FlipKind.FIX: "Fixes (failed → passed)",
    FlipKind.NEW_ERROR: "Errors that appeared",
}


def side_name(side: Side) -> str:
    return "official" if side.label == "official" else f"run {side.label}"


def compare_text(result: Comparison) -> str:
    a, b = side_name(result.a), side_name(result.b)
    lines = [f"*{a} vs {b}* (A − B: {b} is the reference; {_lanes(result.lanes)})", _differs(result)]
    for slot, groups in result.by_slot.items():
        lines.append(f"*{shown(slot)}*")
        lines.extend(f"• {_group_line(name, stats)}" for name, stats in groups.items())
    for kind, title in _FLIP_TITLES.items():
        pairs = result.of_kind(kind)
        if pairs:
            lines.append(f"*{title}: {len(pairs)}*  {_pair_list(pairs, kind)}")
    if result.excluded:
        lines.append(f"*Left out (not valid results): {len(result.excluded)}*  {_excluded(result.excluded)}")
    for side, only in ((a, result.only_a), (b, result.only_b)):
        if only:
            lines.append(f"*Only in {side}: {len(only)}*  {_keys(only)}")
    return clip("\n".join(lines), MESSAGE_TEXT_LIMIT)


def card_warning(result: Comparison, alpha: float) -> list[Block]:
    """A finished run's card: a ⚠ line when its regressions against official are significant."""
    if not result.significant_regression(alpha):
        return []
    stats = result.overall
    diff = fmt_pts(stats.diff_pts) if stats.diff_pts is not None else "n/a"
    text = (
        f":warning: vs official: {diff}, {_count(stats.regressions, 'regression')} "
        f"(exact McNemar {fmt_p(stats.p_value)} < {alpha:g}); the report in the thread lists them"
    )
    return [ContextBlock(elements=[MarkdownTextObject(text=text)])]


def chart_comment(user_id: str, a: str, b: str) -> str:
    return f"<@{user_id}> compared {a} with {b}: the difference per suite, A − B, with 95 % intervals."


def chart_not_posted(error: str, what: str = "comparison") -> str:
    return f"The {what}'s chart was not posted in this channel (Slack answered `{shown(error, 80)}`)."


def versus_official_line(result: Comparison, alpha: float) -> str:
    """The report's line: "vs official: −4.2 pts, 3 regressions", the regressions, ⚠ when significant."""
    stats = result.overall
    regressions = result.of_kind(FlipKind.REGRESSION)
    diff = fmt_pts(stats.diff_pts) if stats.diff_pts is not None else "no valid pair"
    line = f"vs official: {diff}, {_count(len(regressions), 'regression')}"
    if result.significant_regression(alpha):
        line = f":warning: {line} (exact McNemar {fmt_p(stats.p_value)} < {alpha:g})"
    if regressions:
        line += f"\nRegressed against official: {_pair_list(regressions, FlipKind.REGRESSION)}"
    return clip(line, SECTION_LIMIT)


def runs_text(lines: Sequence[RunLine]) -> str:
    if not lines:
        return "No finished run matches."
    out = ["*Finished runs*, newest first (valid results: passed/valid, mean reward):"]
    for line in lines:
        finished = when(line.finished_at) if line.finished_at else "—"
        out.append(
            f"• *#{line.run_id}* {code(line.title)} {code(line.model)} {finished}: "
            f"baseline {_headline(line.baseline)}, MCP {_headline(line.mcp)}"
        )
    out.append("Compare two with `/csb compare <run> <run|official>`.")
    return clip("\n".join(out), MESSAGE_TEXT_LIMIT)


def _headline(h: Headline) -> str:
    return f"{h.passed}/{h.valid}, {reward(h.mean_reward)}" if h.valid else "—"


def _lanes(lanes: LaneChoice) -> str:
    if lanes is LaneChoice.CONFIG:
        return "lanes paired by config"
    return "both lanes paired by role" if lanes is LaneChoice.BOTH else f"{lanes.value} lanes"


def _differs(result: Comparison) -> str:
    if not result.differs:
        return "Same model, config, agent, suite file and spec hash."
    parts = [f"{d.name} {_value(d.a)} vs {_value(d.b)}" for d in result.differs]
    return "Differs: " + "; ".join(parts)


def _value(value: str | None) -> str:
    return code(value, 80) if value else "(not recorded)"


def _group_line(name: str, s: GroupStats) -> str:
    label = "*overall*" if name == OVERALL else code(name)
    if not s.n:
        return f"{label}: no valid pair"
    ci = f" [95 % CI {fmt_signed(s.diff_ci[0], 1)}, {fmt_signed(s.diff_ci[1], 1)}]" if s.diff_ci else ""
    mean = ""
    if s.mean_diff is not None:
        mci = f" [{fmt_signed(s.mean_ci[0], 3)}, {fmt_signed(s.mean_ci[1], 3)}]" if s.mean_ci else ""
        mean = f"; mean reward {reward(s.mean_a)} vs {reward(s.mean_b)}, {fmt_signed(s.mean_diff, 3)}{mci}"
    return (
        f"{label}: {s.k_a}/{s.n} vs {s.k_b}/{s.n} passed, {fmt_pts(s.diff_pts or 0.0)}{ci}; "
        f"{_count(s.regressions, 'regression')}, {_count(s.fixes, 'fix', 'fixes')}, "
        f"exact McNemar {fmt_p(s.p_value)}"
        f"{mean}; cost/task {_cost(s.cost_a)} vs {_cost(s.cost_b)}"
    )


def _pair_list(pairs: Sequence[Pair], kind: FlipKind) -> str:
    shown_pairs = [_pair(p, kind) for p in pairs[:LISTED]]
    rest = len(pairs) - LISTED
    return ", ".join(shown_pairs) + (f" … and {rest} more" if rest > 0 else "")


def _pair(pair: Pair, kind: FlipKind) -> str:
    text = f"{code(pair.key, 80)} ({shown(pair.slot, 40)})"
    if kind is FlipKind.NEW_ERROR:
        text += f" {pair.a.invalid or pair.a.status.value}"
    return text


def _excluded(pairs: Sequence[Pair]) -> str:
    def why(pair: Pair) -> str:
        sides = [f"A {p.invalid or p.status.value}" for p in (pair.a,) if not p.counts]
        sides += [f"B {p.invalid or p.status.value}" for p in (pair.b,) if not p.counts]
        return f"{code(pair.key, 80)} ({', '.join(sides)})"

    rest = len(pairs) - LISTED
    return ", ".join(why(p) for p in pairs[:LISTED]) + (f" … and {rest} more" if rest > 0 else "")


def _keys(keys: Sequence[tuple[str, str]]) -> str:
    rest = len(keys) - LISTED
    return ", ".join(code(key, 80) for _, key in keys[:LISTED]) + (f" … and {rest} more" if rest > 0 else "")


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _cost(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.2f}"
