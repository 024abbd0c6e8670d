"""CSB's config names: which are MCP (`config_utils.is_mcp_config`), and which Deep Search is expected on.

(Which of CSB's scripts know only the legacy names is said where pairs are judged: `bot.domain.integrity`.)
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
# validate_task_run.py's deepsearch_unused rule names these two alone.
DEEP_SEARCH_CONFIGS = frozenset({"sourcegraph_full", "mcp-remote-direct"})


def is_mcp_config(config: str) -> bool:
    """CSB's rule: an `mcp-` prefix or a legacy Sourcegraph name; a bare `mcp` is not MCP."""
    return config.startswith("mcp-") or config in _LEGACY_MCP
