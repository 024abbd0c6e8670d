"""Which pairs are results: CSB's curation rules, applied to a pair from its lanes' stored verdicts.

A pair is left out of the paired statistics when (in this order):
1. either lane is `errored` by the MANIFEST's rule (`generate_manifest.py`: an exception without a
   reward, zero tokens, a crash);
2. its MCP lane never called an MCP tool (`validate_task_run.py`'s `mcp_never_used`, counted as the
   trace audit counts, category B: MCP was not injected);
3. its baseline lane did (`audit_traces.py`'s baseline contamination).
An unknown count (no trace to read) breaks no rule. Where CSB's own script would not have looked at the
lane (its legacy config names only), the finding names that script (`unseen_by`), so the report can say
so. Pure: the verdicts were read from the files when the lanes ended.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bot.domain.verdict import LaneVerdict, ManifestStatus

# The configs audit_traces.py walks: its MCP counts on the Sourcegraph lanes (SJ's copy adds
# sourcegraph_base), its baseline contamination on `baseline` alone.
AUDIT_TRACES_MCP_CONFIGS = frozenset({"sourcegraph_full", "sourcegraph_base"})
AUDIT_TRACES_BASELINE_CONFIGS = frozenset({"baseline"})
AUDIT_TRACES = "audit_traces.py"


class InvalidRule(StrEnum):
    MANIFEST_ERRORED = "manifest_errored"
    MCP_NEVER_USED = "mcp_never_used"
    BASELINE_CONTAMINATED = "baseline_contaminated"


@dataclass(frozen=True)
class Invalidity:
    """One rule a pair breaks, on which lane (`baseline` or `mcp`), and the CSB script that would not have
    seen it on that lane's config (None when CSB's own script applies it there)."""

    rule: InvalidRule
    lane: str
    detail: str | None = None  # the MANIFEST's rule for `manifest_errored`
    unseen_by: str | None = None


def pair_invalidity(baseline: LaneVerdict | None, mcp: LaneVerdict | None) -> tuple[Invalidity, ...]:
    """Every rule the pair breaks, in rule order; empty for a valid pair."""
    found: list[Invalidity] = []
    for lane, verdict in (("baseline", baseline), ("mcp", mcp)):
        if verdict is not None and verdict.manifest_status is ManifestStatus.ERRORED:
            rule = verdict.manifest_rule.value if verdict.manifest_rule else None
            found.append(Invalidity(InvalidRule.MANIFEST_ERRORED, lane, detail=rule))
    if mcp is not None and mcp.mcp_calls == 0:
        unseen = _unseen(mcp.config, AUDIT_TRACES_MCP_CONFIGS)
        found.append(Invalidity(InvalidRule.MCP_NEVER_USED, "mcp", unseen_by=unseen))
    if baseline is not None and baseline.mcp_calls:
        unseen = _unseen(baseline.config, AUDIT_TRACES_BASELINE_CONFIGS)
        found.append(Invalidity(InvalidRule.BASELINE_CONTAMINATED, "baseline", unseen_by=unseen))
    return tuple(found)


def _unseen(config: str, seen: frozenset[str]) -> str | None:
    return None if config in seen else AUDIT_TRACES
