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

BEHAVIOURS = ("pass", "fail", "error", "ratelimit", "hang", "crash", "timeout")


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
