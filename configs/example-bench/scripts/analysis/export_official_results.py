#!/usr/bin/env python3
"""Stand-in for CSB's `scripts/analysis/export_official_results.py`: the official-results bundle.

Takes CSB's command line as `promote_run.py` calls it once the MANIFEST was regenerated
(`--runs-dir runs/official --output-dir docs/official_results`; also `--run NAME`, repeatable, and
`--manifest-only`), reads every trial under each run folder's config folders (the folder's `result.json`,
with its `task_metrics.json` overriding reward and status, as CSB's script does), and writes what CSB's
script writes for a reader: `data/official_results.json` (the same top-level keys and counts:
`run_count`, `task_count`, `all_task_count`, `excluded_task_count`, `suite_summaries`, `run_summaries`,
`tasks`, `all_tasks`, `excluded_tasks`), `README.md` with the summary tables, `index.html`, and one page
per run and per suite. It prints CSB's `[OK] Wrote export bundle to: …` lines and exits 0; when the runs
folder is missing it prints `[FAIL] runs dir not found: …` and exits 2, as CSB's; any other failure (an
output folder that cannot be written, say) ends it with a traceback and exit 1, as CSB's.

Where it differs from CSB's script: no per-task trace pages, audits or bundled traces (there are no
transcripts here), no `--serve`, `--port` or `--max-trace-examples`, and no secret redaction (the bench's
results hold no secrets). The suite is taken from the run folder's name (`csb_<family>_<suite>…`), not
from `configs/run_dir_prefix_map.json`, which the bench does not have (CSB's script stops with a
traceback without it). Of a task run more than once in a suite and config, the one started last is kept.
An MCP trial whose `task_metrics.json` counts zero MCP calls is excluded, as CSB's
`mcp_run_zero_mcp_calls` flag excludes it.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import statistics
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SKIP_DIR_PARTS = {"retrieval_events", "archive", "__archived", "__broken_verifier", "validation_test"}
CONFIG = re.compile(r"^(baseline|mcp)-(local|remote)-(direct|artifact)$")
LEGACY_CONFIGS = {"baseline", "sourcegraph_full", "sourcegraph_base", "mcp", "artifact_full"}
MCP_LEGACY = {"sourcegraph_full", "sourcegraph_base", "artifact_full"}
SUITE = re.compile(r"^(csb_[a-z]+_[a-z]+)")


def is_mcp(config: str) -> bool:
    return config.startswith("mcp-") or config in MCP_LEGACY


def load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def trial(suite: str, run: str, config: str, folder: Path) -> dict[str, Any] | None:
    result = load(folder / "result.json")
    if result is None or not ("task_name" in result or "trial_name" in result):
        return None
    verifier = result.get("verifier_result") or {}
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    reward = rewards.get("reward") if isinstance(rewards, dict) else None
    reward = float(reward) if isinstance(reward, int | float) else None
    status = "errored" if result.get("exception_info") else "unknown" if reward is None else "failed"
    if reward is not None and reward > 0 and status != "errored":
        status = "passed"
    metrics = load(folder / "task_metrics.json") or {}
    if isinstance(metrics.get("reward"), int | float):
        reward = float(metrics["reward"])
    if isinstance(metrics.get("passed"), bool):
        status = "passed" if metrics["passed"] else "failed"
    flags = ["mcp_run_zero_mcp_calls"] if is_mcp(config) and metrics.get("tool_calls_mcp") == 0 else []
    name = result.get("task_name") or folder.name.rsplit("__", 1)[0]
    return {
        "suite": suite,
        "run_dir": run,
        "config": config,
        "task_name": str(name),
        "task_dir": str(folder),
        "status": status,
        "reward": reward if reward is not None else 0.0,
        "passed": status == "passed",
        "started_at": result.get("started_at"),
        "flags": flags,
        "is_mcp_config": is_mcp(config),
    }


def scan(runs_dir: Path, only: set[str] | None) -> list[dict[str, Any]]:
    found = []
    for run in sorted(p for p in runs_dir.iterdir() if p.is_dir()):
        if any(part in run.name for part in SKIP_DIR_PARTS) or (only and run.name not in only):
            continue
        match = SUITE.match(run.name)
        suite = match.group(1) if match else "unknown"
        for config in sorted(p for p in run.iterdir() if p.is_dir()):
            if not (CONFIG.match(config.name) or config.name in LEGACY_CONFIGS):
                continue
            for result in sorted(config.rglob("result.json")):
                parts = set(result.relative_to(config).parts)
                if parts & SKIP_DIR_PARTS or (result.parent / "__broken_verifier").exists():
                    continue
                record = trial(suite, run.name, config.name, result.parent)
                if record is not None:
                    found.append(record)
    return found


def summary(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "task_count": len(tasks),
        "mean_reward": statistics.mean(t["reward"] for t in tasks) if tasks else 0.0,
        "pass_rate": sum(t["passed"] for t in tasks) / len(tasks) if tasks else 0.0,
    }


def latest(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept: dict[tuple[str, str, str], dict[str, Any]] = {}
    for task in tasks:
        key = (task["suite"], task["config"], task["task_name"])
        if key not in kept or str(task["started_at"] or "") >= str(kept[key]["started_at"] or ""):
            kept[key] = task
    return sorted(kept.values(), key=lambda t: (t["suite"], t["config"], t["task_name"]))


def table(rows: list[dict[str, Any]], first: str) -> str:
    lines = [f"| {first} | config | tasks | mean reward | pass rate |", "|---|---|---|---|---|"]
    lines += [
        f"| {r[first]} | {r['config']} | {r['task_count']} | {r['mean_reward']:.3f} | {r['pass_rate']:.1%} |"
        for r in rows
    ]
    return "\n".join(lines)


def export(runs_dir: Path, output: Path, only: set[str] | None, manifest_only: bool) -> dict[str, Any]:
    if manifest_only:
        manifest = load(runs_dir / "MANIFEST.json") or {}
        history = manifest.get("run_history") or {}
        tracked = {
            run.get("run_dir")
            for tasks in history.values()
            if isinstance(tasks, dict)
            for stats in tasks.values()
            if isinstance(stats, dict)
            for run in stats.get("runs", [])
            if isinstance(run, dict)
        }
        only = (only & tracked if only else tracked) or only
    everything = scan(runs_dir, only)
    excluded = [t for t in everything if t["flags"]]
    valid = [t for t in everything if not t["flags"]]
    kept = latest(valid)
    by_run: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for task in valid:
        by_run[(task["run_dir"], task["suite"], task["config"])].append(task)
    run_rows = [
        {"run_dir": run, "suite": suite, "config": config, "is_mcp_config": is_mcp(config), **summary(tasks)}
        for (run, suite, config), tasks in sorted(by_run.items())
    ]
    by_suite: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for task in kept:
        by_suite[(task["suite"], task["config"])].append(task)
    suite_rows = [
        {"suite": suite, "config": config, "is_mcp_config": is_mcp(config), **summary(tasks)}
        for (suite, config), tasks in sorted(by_suite.items())
    ]
    data = {
        "generated_at": datetime.now(UTC).isoformat(),
        "runs_dir": str(runs_dir),
        "suite_count": len({row["suite"] for row in suite_rows}),
        "run_count": len({row["run_dir"] for row in run_rows}),
        "task_count": len(kept),
        "all_task_count": len(valid),
        "excluded_task_count": len(excluded),
        "suite_summaries": suite_rows,
        "run_summaries": run_rows,
        "tasks": kept,
        "all_tasks": sorted(valid, key=lambda t: (t["run_dir"], t["config"], t["task_name"])),
        "excluded_tasks": excluded,
    }
    (output / "data").mkdir(parents=True, exist_ok=True)
    (output / "data" / "official_results.json").write_text(json.dumps(data, indent=2, sort_keys=True))
    readme = "# Official results\n\n## By suite\n\n" + table(suite_rows, "suite")
    readme += "\n\n## By run\n\n" + table(run_rows, "run_dir") + "\n"
    (output / "README.md").write_text(readme)
    (output / "index.html").write_text(
        "<!doctype html><title>Official results</title><pre>" + html.escape(readme) + "</pre>\n"
    )
    for folder, rows, key in (("runs", run_rows, "run_dir"), ("suites", suite_rows, "suite")):
        (output / folder).mkdir(exist_ok=True)
        for name in sorted({row[key] for row in rows}):
            page = table([row for row in rows if row[key] == name], key)
            (output / folder / f"{name}.md").write_text(f"# {name}\n\n{page}\n")
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", default="./runs/analysis")
    parser.add_argument("--output-dir", default="./docs/official_results")
    parser.add_argument("--run", action="append", default=[])
    parser.add_argument("--manifest-only", action="store_true")
    args = parser.parse_args()
    runs_dir, output = Path(args.runs_dir).resolve(), Path(args.output_dir).resolve()
    if not runs_dir.is_dir():
        print(f"[FAIL] runs dir not found: {runs_dir}")
        return 2
    data = export(runs_dir, output, set(args.run) or None, args.manifest_only)
    print(f"[OK] Wrote export bundle to: {output}")
    print(f"      Runs: {data['run_count']}")
    print(f"      Valid scored tasks: {data['task_count']}")
    print(f"      Excluded tasks: {data['excluded_task_count']}")
    print(f"      JSON data: {output / 'data' / 'official_results.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
