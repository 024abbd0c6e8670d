"""CSB's config names: which are MCP (`config_utils.is_mcp_config`), and which its older scripts know.

Several of CSB's checks only look at the legacy names (`baseline`, `sourcegraph_full`); on today's lanes
(`baseline-local-direct`, `mcp-remote-direct`) they see nothing. The bot applies the same rule to every
lane, and labels a finding CSB's script would not have made (`unseen_by`).
"""

from __future__ import annotations

_LEGACY_MCP = frozenset(
    {
        "sourcegraph_full",
        "sourcegraph_base",
        "sourcegraph_isolated",
        "sourcegraph",
        "artifact_full",
        "deepsearch",
        "deepsearch_hybrid",
    }
)
# audit_traces.py's hard-coded CONFIGS (SJ's copy adds sourcegraph_base): its contamination and MCP counts.
AUDIT_TRACES_CONFIGS = frozenset({"baseline", "sourcegraph_full", "sourcegraph_base"})
# validate_task_run.py's deepsearch_unused rule names these two alone.
DEEP_SEARCH_CONFIGS = frozenset({"sourcegraph_full", "mcp-remote-direct"})


def is_mcp_config(config: str) -> bool:
    """CSB's rule: an `mcp-` prefix or a legacy Sourcegraph name; a bare `mcp` is not MCP."""
    return config.startswith("mcp-") or config in _LEGACY_MCP


def unseen_by_audit_traces(config: str) -> bool:
    """Whether `audit_traces.py` (MCP calls, baseline contamination) would skip this config's lanes."""
    return config not in AUDIT_TRACES_CONFIGS
