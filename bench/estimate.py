"""The approval card's estimate for a 528-lane request over a history of 100,000 finished lanes.

Fills a database (a temporary SQLite file, or with `--db postgres` a throwaway PostgreSQL cluster, the
tests' helper) through the bot's own migrations with `--lanes` finished lanes (default 100,000) of 20
suites × 6 configs × 5 models, in runs of 50 lanes, then times the whole estimate as the card makes it
(`SpendService.assess`: the history of each (suite, config) group of the request, the figures, and the
category's budget against the month's spend) for a paired request of 264 tasks over 11 suites at
parallel 32. One warm-up, then `--rounds` (default 20) timed calls; the goal is their median wall (the
slowest and the CPU time are printed too: on a shared machine the walls stretch with the load, the CPU
time of the bot's threads, SQLite's included, much less).

Prints `name=value` lines, last `goal_met`. Run: `.venv/bin/python bench/estimate.py [--db postgres]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the throwaway PostgreSQL cluster of the tests

from postgres_cluster import bench_cluster  # noqa: E402
from sqlalchemy import insert, text  # noqa: E402

from bot.domain.budget import Budget  # noqa: E402
from bot.domain.clock import ManualClock  # noqa: E402
from bot.domain.outcome import LaneStatus  # noqa: E402
from bot.domain.policy import CategoryPolicy, PolicyConfig  # noqa: E402
from bot.domain.spec import LanePlan, LaneRole, RunParams, RunSpec, TaskRef  # noqa: E402
from bot.domain.states import RequestState, RunState  # noqa: E402
from bot.services.spend import SpendService  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.models import Lane, Run, RunRequest  # noqa: E402

GOAL_MS = 100.0
SUITES = [f"csb_suite_{n:02d}" for n in range(20)]
CONFIGS = [
    "baseline-local-direct",
    "mcp-remote-direct",
    "baseline-local-artifact",
    "mcp-remote-artifact",
    "baseline",
    "sourcegraph_full",
]
MODELS = [f"anthropic/model-{n}" for n in range(5)]
LANES_PER_RUN = 50
REQUEST_TASKS, REQUEST_SUITES, PARALLEL = 264, 11, 32
NOW = datetime(2026, 3, 15, tzinfo=UTC)
_BATCH = 5_000


def _history(lanes: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Requests, runs and finished lanes: every (suite, config, model) group about equally full, the
    lanes spread over the last 90 days, costs and durations varying by group and lane."""
    requests, runs, rows = [], [], []
    for index in range(lanes):
        run_no, in_run = divmod(index, LANES_PER_RUN)
        if in_run == 0:
            model = MODELS[run_no % len(MODELS)]
            at = NOW - timedelta(days=90) + timedelta(minutes=run_no)
            requests.append(
                dict(
                    id=run_no + 1,
                    state=RequestState.APPROVED,
                    spec_json="{}",
                    spec_hash="0" * 64,
                    requester="U0BENCH",
                    channel_id="C0BENCH",
                    created_at=at,
                    category="staging",
                )
            )
            runs.append(
                dict(
                    id=run_no + 1,
                    request_id=run_no + 1,
                    state=RunState.FINISHED,
                    run_dir=f"bench_{run_no}",
                    model=model,
                    parallel=PARALLEL,
                    created_at=at,
                )
            )
        suite = SUITES[(index // 7) % len(SUITES)]
        config = CONFIGS[index % len(CONFIGS)]
        started = NOW - timedelta(days=90) + timedelta(seconds=index * 77)
        rows.append(
            dict(
                run_id=run_no + 1,
                pair_index=in_run,
                task_id=f"task-{index}",
                suite=suite,
                task_path=f"benchmarks/{suite}/task-{index}",
                role=LaneRole.BASELINE.value if "baseline" in config else LaneRole.MCP.value,
                config=config,
                mcp_type="none",
                model=MODELS[run_no % len(MODELS)],
                state=LaneStatus.PASSED if index % 3 else LaneStatus.FAILED,
                timeout_sec=3600,
                jobs_dir="jobs",
                log_path="lane.log",
                started_at=started,
                finished_at=started + timedelta(seconds=300 + index % 1500),
                cost_usd=None if index % 50 == 0 else 0.2 + (index % 97) / 40,
            )
        )
    return requests, runs, rows


async def _fill(store: Store, lanes: int) -> float:
    started = time.perf_counter()
    requests, runs, rows = _history(lanes)
    async with store.write() as session:
        await session.execute(insert(RunRequest), requests)
        await session.execute(insert(Run), runs)
    for at in range(0, len(rows), _BATCH):
        async with store.write() as session:
            await session.execute(insert(Lane), rows[at : at + _BATCH])
    # What a long-lived database's autovacuum keeps: statistics, and PostgreSQL's visibility map (which
    # lets it answer from the covering index alone).
    async with store.engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("VACUUM ANALYZE" if store.engine.dialect.name == "postgresql" else "ANALYZE"))
    return time.perf_counter() - started


def _request() -> RunSpec:
    tasks = tuple(
        TaskRef(
            task_id=f"new-task-{n}",
            suite=SUITES[n % REQUEST_SUITES],
            path=f"benchmarks/{SUITES[n % REQUEST_SUITES]}/new-task-{n}",
        )
        for n in range(REQUEST_TASKS)
    )
    return RunSpec(
        params=RunParams(model=MODELS[0], parallel=PARALLEL),
        task_file="benchmarks/suites/bench.json",
        task_file_sha256="0" * 64,
        tasks=tasks,
        lanes=(
            LanePlan(role=LaneRole.BASELINE, config=CONFIGS[0], mcp_type="none"),
            LanePlan(role=LaneRole.MCP, config=CONFIGS[1], mcp_type="sourcegraph_full"),
        ),
        parallel=PARALLEL,
    )


async def _measure(url: str, lanes: int, rounds: int) -> bool:
    store = Store(url)
    try:
        await store.create_tables()
        fill = await _fill(store, lanes)
        policy = PolicyConfig(staging=CategoryPolicy(budget=Budget(monthly_usd=300)))
        service = SpendService(store, policy, ManualClock(NOW))
        spec = _request()
        await service.assess(spec)  # warm-up: connections, statements
        times: list[float] = []
        cpu: list[float] = []
        for _ in range(rounds):
            started, started_cpu = time.perf_counter(), time.process_time()
            checks = await service.assess(spec)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
    finally:
        await store.close()
    estimate = checks.estimate
    print(f"history_lanes={lanes}")
    print(f"fill_sec={fill:.1f}")
    print(f"request_lanes={estimate.lanes}")
    print(f"groups={REQUEST_SUITES * 2}")
    print(f"samples={estimate.samples}")
    print(f"basis={estimate.basis.value}")
    cost = estimate.cost_usd
    print(f"estimate_usd={cost.median:.2f}" if cost else "estimate_usd=none")
    print(f"budget_lines={len(checks.budget.lines)}")
    print(f"estimate_wall_ms_p50={statistics.median(times):.1f}")
    print(f"estimate_wall_ms_max={max(times):.1f}")
    print(f"estimate_cpu_ms_p50={statistics.median(cpu):.1f}")  # the bot's threads, the database's included
    print(f"load_average={os.getloadavg()[0]:.2f}")
    typical = statistics.median(times)
    met = typical <= GOAL_MS
    print(f"goal_met={'yes' if met else 'no'} (median wall of {rounds} <= {GOAL_MS:.0f} ms)")
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--lanes", type=int, default=100_000, help="finished lanes of history")
    parser.add_argument("--rounds", type=int, default=20, help="timed estimates after one warm-up")
    args = parser.parse_args()
    print(f"db={args.db}")
    if args.db == "postgres":
        cluster = bench_cluster()
        try:
            met = asyncio.run(_measure(cluster.new_database(migrated=False), args.lanes, args.rounds))
        finally:
            cluster.stop()
    else:
        with tempfile.TemporaryDirectory(prefix="csb-estimate-bench-") as tmp:
            met = asyncio.run(_measure(f"sqlite+aiosqlite:///{tmp}/bench.db", args.lanes, args.rounds))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
