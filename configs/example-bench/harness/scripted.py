"""The example bench's scripted agent, written once: what it does for a task and a lane.

Both players of the bench read it: `bin/harbor` (the Harbor stand-in, standard library only) and
`harness/harbor_agent.py` (the same agent inside real Harbor). The rule, as the bench's README gives it:

- the lane is `baseline` when BASELINE_MCP_TYPE is `none` or unset (CSB's agent default), else `mcp`;
- the MCP lane applies the task's reference solution, the baseline lane only on `easy` tasks;
- `HARBOR_STANDIN_SCRIPT` names a JSON object of `<task_id>/<lane>` or `<task_id>` → behaviour that overrides
  the rule, and `HARBOR_STANDIN_DELAY` gives the seconds of "work" before the agent finishes.

Token counts and cost are derived from task, lane and model, so a report's figures are deterministic.
Standard library only: `bin/harbor` runs on the bot's Python, the agent on Harbor's.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from pathlib import Path

# An exception text per CSB error fingerprint (`status_fingerprints.py`), as such failures read.
FINGERPRINT_TEXTS = {
    "token_refresh_403": "OAuth token refresh failed: 403 Forbidden",
    "verifier_parse_error": "verifier output could not be parsed as json",
    "api_500": "API Error: 500 Internal Server Error",
    "api_rate_limit": "API Error: 429 Too Many Requests",
    "context_window_exceeded": "prompt is too long: 212000 tokens > 200000 maximum",
    "timeout": "deadline exceeded while waiting for the agent",
    "mcp_connection": "MCP server sourcegraph: connection refused",
    "import_error": "ModuleNotFoundError: No module named 'harness_extras'",
    "docker_compose_fail": "docker compose up failed: container exited with code 137",
    "permission_denied": "open /workspace/out.txt: permission denied",
    "git_error": "fatal: could not read from remote git repository",
    "deep_search_polling_only": "Poll for results using sg_deepsearch_read",
}
# Outcomes CSB's curation tells apart (bin/harbor plays them; see the README):
CURATION = (
    "zerotokens",  # the account's token failed: 0 input and 0 output tokens, 3 transcript lines, scored 0
    "crash3",  # the agent died: null tokens, no trajectory, a 3-line transcript, scored 0
    "nomcp",  # an MCP lane that passes without calling an MCP tool
    "mcpcall",  # a lane whose transcript has one MCP call (a contaminated baseline)
    "metrics",  # a pass, and a task_metrics.json with cost_usd
    "metrics-nocost",  # a pass, and a task_metrics.json without cost_usd
)
BEHAVIOURS = (
    "pass",
    "fail",
    "error",
    "ratelimit",
    "hang",
    "crash",
    "timeout",
    *CURATION,
    *(f"fp-{name}" for name in FINGERPRINT_TEXTS),
)


class ScriptError(ValueError):
    """HARBOR_STANDIN_SCRIPT or HARBOR_STANDIN_DELAY says something the scripted agent cannot play."""


def lane_of(environ: Mapping[str, str]) -> str:
    return "baseline" if environ.get("BASELINE_MCP_TYPE", "none") == "none" else "mcp"


def behaviour(source_id: str, difficulty: str, lane: str, environ: Mapping[str, str]) -> str:
    """The scripted behaviour of this task and lane, else the rule: MCP passes, baseline passes easy tasks."""
    return scripted(source_id, lane, environ) or ("pass" if lane == "mcp" or difficulty == "easy" else "fail")


def scripted(source_id: str, lane: str, environ: Mapping[str, str]) -> str | None:
    """The HARBOR_STANDIN_SCRIPT entry for `<task_id>/<lane>`, else `<task_id>`, else None."""
    script_path = environ.get("HARBOR_STANDIN_SCRIPT")
    if not script_path:
        return None
    try:
        script = json.loads(Path(script_path).read_text())
    except (OSError, ValueError) as exc:
        raise ScriptError(f"HARBOR_STANDIN_SCRIPT={script_path}: {exc}") from exc
    if not isinstance(script, dict):
        raise ScriptError(f"HARBOR_STANDIN_SCRIPT={script_path}: expected a JSON object")
    chosen = script.get(f"{source_id}/{lane}", script.get(source_id))
    if chosen is not None and chosen not in BEHAVIOURS:
        raise ScriptError(f"HARBOR_STANDIN_SCRIPT: {chosen!r} for {source_id} is not one of {BEHAVIOURS}")
    return chosen


def delay(environ: Mapping[str, str]) -> float:
    """HARBOR_STANDIN_DELAY: seconds the agent works before it finishes (default 0)."""
    text = environ.get("HARBOR_STANDIN_DELAY", "0") or "0"
    try:
        seconds = float(text)
    except ValueError as exc:
        raise ScriptError(f"HARBOR_STANDIN_DELAY={text!r} is not a number") from exc
    if seconds < 0:
        raise ScriptError(f"HARBOR_STANDIN_DELAY={text!r} is negative")
    return seconds


def transcript(lane: str, behaviour: str) -> list[dict[str, object]]:
    """The agent's stream-JSON transcript (`agent/claude-code.txt`) for a curation behaviour: an init
    line offering the MCP tools on the MCP lane, then tool calls (two MCP calls on an MCP lane, one for
    `mcpcall`, none for `nomcp`); three lines for `zerotokens` and `crash3`."""
    tools = ["Bash", "Read"] + (["mcp__sourcegraph__sg_keyword_search"] if lane == "mcp" else [])
    lines: list[dict[str, object]] = [{"type": "system", "subtype": "init", "tools": tools}]
    if behaviour in ("zerotokens", "crash3"):
        return [
            *lines,
            {"type": "assistant", "message": {"content": []}},
            {"type": "result", "is_error": True},
        ]
    mcp_calls = 1 if behaviour == "mcpcall" else 0 if behaviour == "nomcp" or lane != "mcp" else 2
    for _ in range(mcp_calls):
        call = {"type": "tool_use", "name": "mcp__sourcegraph__sg_keyword_search", "input": {"query": "x"}}
        lines.append({"type": "assistant", "message": {"content": [call]}})
    lines.append({"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash"}]}})
    lines.append({"type": "result", "is_error": False})
    return lines


def task_metrics(
    source_id: str, lane: str, model: str, reward: float | None, with_cost: bool
) -> dict[str, object]:
    """A `task_metrics.json` as CSB's extract_task_metrics.py writes it (the fields CSB's rules read)."""
    used = usage(source_id, lane, model)
    n_input, n_cache, n_output = (
        int(used[key]) for key in ("n_input_tokens", "n_cache_tokens", "n_output_tokens")
    )
    metrics: dict[str, object] = {
        "task_id": source_id,
        "config_name": "mcp-remote-direct" if lane == "mcp" else "baseline-local-direct",
        "reward": reward,
        "status": "passed" if reward else "failed",
        "wall_clock_seconds": 42.0,
        "input_tokens": n_input - n_cache,
        "output_tokens": n_output,
        "cache_creation_tokens": n_cache // 10,
        "cache_read_tokens": n_cache - n_cache // 10,
        "tool_calls_total": 12,
        "tool_calls_mcp": 2 if lane == "mcp" else 0,
        "search_calls_deepsearch": 1 if lane == "mcp" else None,
        "files_modified": 1,
    }
    if with_cost:
        metrics["cost_usd"] = round(float(used["cost_usd"]) * 3, 6)
    return metrics


def usage(source_id: str, lane: str, model: str) -> dict[str, int | float]:
    """Token counts and cost derived from task, lane and model: small, plausible, deterministic."""
    seed = zlib.crc32(f"{source_id}/{lane}/{model}".encode())
    n_input = 20_000 + seed % 30_000
    n_cache = n_input * 9 // 10
    n_output = 500 + seed % 2_000
    cost_usd = round(((n_input - n_cache) * 1.0 + n_cache * 0.1 + n_output * 5.0) / 1_000_000, 6)
    return {
        "n_input_tokens": n_input,
        "n_cache_tokens": n_cache,
        "n_output_tokens": n_output,
        "cost_usd": cost_usd,
    }
