"""Failures grouped by cause, in words: CSB's fingerprint label and advice, the category (A rerun as is,
B fix the setup, C re-score, D genuine: do not rerun), and how many lanes.

Pure: cause groups in, lines out. The report and the living card both show them.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain.causes import CauseGroup, OtherCause
from bot.domain.verdict import Category
from bot.slack.views.format import code, shown

CATEGORY_WORDS = {
    Category.A: "A: rerun as is",
    Category.B: "B: fix the setup, then rerun",
    Category.C: "C: fix the verifier, re-score",
    Category.D: "D: genuine, do not rerun",
}
# label, advice: for the causes that are no fingerprint (no exception to match)
OTHER_WORDS = {
    OtherCause.ZERO_TOKEN: (
        "Zero tokens: the account's token failed (the MANIFEST counts it `errored`)",
        "Re-authenticate the account (`claude auth`), then rerun.",
    ),
    OtherCause.CRASH: (
        "Crash: no tokens, no trajectory, ≤ 5 transcript lines (the MANIFEST counts it `errored`)",
        "Rerun; the lane's log says why the agent died.",
    ),
    OtherCause.MCP_NEVER_USED: (
        "MCP lane never called an MCP tool (MCP not injected)",
        "Check the MCP preamble and that the tools were injected (`BASELINE_MCP_TYPE`), then rerun.",
    ),
    OtherCause.BASELINE_CONTAMINATED: (
        "Baseline lane called an MCP tool (contamination)",
        "The baseline must not reach Sourcegraph: check its MCP configuration, then rerun.",
    ),
    OtherCause.NO_TRIAL_RESULT: (
        "No trial result: Harbor or its host ended first",
        "Rerun; the lane's log says how Harbor ended.",
    ),
    OtherCause.LANE_TIMEOUT: (
        "No result within the lane's time limit",
        "Consider a longer time limit or a simpler task.",
    ),
}
ADVICE_SHOWN = 200


def cause_label(group: CauseGroup) -> tuple[str, str]:
    """The cause's label and advice: CSB's, for a fingerprint."""
    cause = group.cause
    if cause.fingerprint is not None:
        return cause.fingerprint.label, cause.fingerprint.advice
    try:
        return OTHER_WORDS[OtherCause(cause.id)]
    except ValueError:
        return cause.id, ""


def cause_lines(groups: Sequence[CauseGroup], *, limit: int) -> list[str]:
    """One line per cause, the largest first, at most `limit` (then how many more)."""
    lines = []
    for group in groups[:limit]:
        label, advice = cause_label(group)
        category = (
            CATEGORY_WORDS[group.cause.category] if group.cause.category else "unknown to CSB's catalog"
        )
        line = f"• {code(group.cause.id, 60)} {label} ×{len(group.lanes)} · {category}"
        if advice:
            line += f" · _{shown(advice, ADVICE_SHOWN)}_"
        lines.append(line)
    if len(groups) > limit:
        lines.append(f"… {len(groups) - limit} more causes")
    return lines
