"""The report's words for CSB's curation: which pairs are not results and why, by the CSB rule each
finding is; and where CSB's own script would not have looked, that it would not have.

Pure: pairs (with their lanes' stored verdicts) in, text out.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.domain.integrity import Invalidity, InvalidRule
from bot.domain.stats import PairedSummary, PairOutcome, fmt_p, fmt_pts, fmt_rate
from bot.slack.views.format import code

RULE_WORDS = {
    InvalidRule.MANIFEST_ERRORED: "a lane `errored` by the MANIFEST's rule (generate_manifest.py)",
    InvalidRule.MCP_NEVER_USED: "MCP lane never called an MCP tool (validate_task_run.py `mcp_never_used`)",
    InvalidRule.BASELINE_CONTAMINATED: "baseline lane called MCP (audit_traces.py baseline contamination)",
}
MANIFEST_RULE_WORDS = {
    "zero_token": "zero tokens",
    "crash": "crash: no tokens, no trajectory, ≤ 5 transcript lines",
    "exception_without_reward": "an exception and no reward",
}
_LANE = {"baseline": "baseline", "mcp": "MCP"}


def removed_pairs(pairs: Sequence[PairOutcome]) -> list[PairOutcome]:
    """The complete pairs CSB's rules leave out of the statistics, in run order."""
    return [pair for pair in pairs if pair.complete and pair.invalid]


def integrity_lines(
    pairs: Sequence[PairOutcome], counted: PairedSummary, everything: PairedSummary
) -> list[str]:
    """How many pairs each rule removed, and the headline with them counted; none when nothing was removed."""
    removed = removed_pairs(pairs)
    if not removed:
        return []
    by_rule = {
        rule: sum(1 for p in removed if any(i.rule is rule for i in p.invalid)) for rule in InvalidRule
    }
    counts = " · ".join(f"{RULE_WORDS[rule]}: {n}" for rule, n in by_rule.items() if n)
    lines = [f"Not results by CSB's rules, excluded: {len(removed)} {_pairs(len(removed))} — {counts}"]
    unseen = sorted({(i.unseen_by, _config(p, i)) for p in removed for i in p.invalid if i.unseen_by})
    lines += [
        f"_CSB's {script} does not check {code(config, 60)} lanes; same rule applied_"
        for script, config in unseen
    ]
    s = everything
    if s.n and s.diff_pts is not None:
        lines.append(
            f"With them counted ({s.n} {_pairs(s.n)}): baseline {fmt_rate(s.baseline.k, s.n)} · "
            f"MCP {fmt_rate(s.mcp.k, s.n)} · {fmt_pts(s.diff_pts)} · McNemar {fmt_p(s.p_value)}"
        )
    return lines


def invalidity_words(pair: PairOutcome) -> str:
    """The rules one pair breaks, short, for its task line."""
    return "; ".join(_finding(pair, found) for found in pair.invalid)


def _finding(pair: PairOutcome, found: Invalidity) -> str:
    lane = _LANE[found.lane]
    if found.rule is InvalidRule.MANIFEST_ERRORED:
        why = MANIFEST_RULE_WORDS.get(found.detail or "", found.detail or "no reason")
        return f"{lane} `errored` to the MANIFEST ({why})"
    if found.rule is InvalidRule.MCP_NEVER_USED:
        return "MCP lane made 0 MCP calls (mcp_never_used)"
    calls = pair.baseline.verdict.mcp_calls if pair.baseline.verdict else None
    return f"baseline made {calls} MCP {'call' if calls == 1 else 'calls'} (contamination)"


def _config(pair: PairOutcome, found: Invalidity) -> str:
    verdict = (pair.baseline if found.lane == "baseline" else pair.mcp).verdict
    return verdict.config if verdict else "?"


def _pairs(n: int) -> str:
    return "pair" if n == 1 else "pairs"
