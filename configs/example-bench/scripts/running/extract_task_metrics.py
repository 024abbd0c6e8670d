#!/usr/bin/env python3
"""Stand-in for CSB's `scripts/running/extract_task_metrics.py`: writes one trial's `task_metrics.json`.

Takes CSB's command line (`--task-dir D --benchmark B --config C [--selected-tasks F]`), as
`promote_run.py` calls it for a trial with a `result.json` and no `task_metrics.json`. Where it differs
from CSB's script: it reads `result.json` only (no transcript, no trace), so it writes the fields that
file holds (status, reward, tokens, cost, wall-clock time) and leaves every tool-call count null, which
CSB's validation treats as unmeasured, not zero. It exits 1 with a message when `result.json` is absent
or unreadable, as CSB's script fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path


def _seconds(timing: object) -> float | None:
    if not isinstance(timing, dict):
        return None
    try:
        start = datetime.fromisoformat(str(timing["started_at"]))
        end = datetime.fromisoformat(str(timing["finished_at"]))
    except (KeyError, ValueError):
        return None
    return (end - start).total_seconds()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-dir", required=True, type=Path)
    parser.add_argument("--benchmark", default="")
    parser.add_argument("--config", default="")
    parser.add_argument("--selected-tasks", default=None)
    args = parser.parse_args()
    try:
        result = json.loads((args.task_dir / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"cannot read result.json in {args.task_dir}: {exc}", file=sys.stderr)
        return 1
    agent = result.get("agent_result") or {}
    rewards = (result.get("verifier_result") or {}).get("rewards") or {}
    reward = rewards.get("reward", rewards.get("score"))
    status = "error" if result.get("exception_info") else ("passed" if (reward or 0) > 0 else "failed")
    metrics = {
        "task_id": result.get("task_name") or args.task_dir.name,
        "benchmark": args.benchmark,
        "config_name": args.config,
        "status": status,
        "reward": reward,
        "input_tokens": agent.get("n_input_tokens"),
        "cache_tokens": agent.get("n_cache_tokens"),
        "output_tokens": agent.get("n_output_tokens"),
        "cost_usd": agent.get("cost_usd"),
        "wall_clock_seconds": _seconds(result),
        "tool_calls_total": None,
        "tool_calls_mcp": None,
        "files_modified": None,
    }
    (args.task_dir / "task_metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
