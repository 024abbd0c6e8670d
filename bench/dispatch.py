"""Dispatch overhead of the engine: 264 tasks × 2 lanes, each lane `sleep 0.2`, at parallel 32, through
the engine (claims, accounts, markers, result reading, a real SQLite file) against the same 528 commands
through `xargs -P 32`, in one run of this script.

The two alternate for a few rounds and each keeps its best wall. Prints both walls and the bot's
peak RSS, then `lanes=528`, `claims_per_sec`, the engine's CPU time (`engine_cpu_sec`: every thread of
the bot's process or processes, from the run queued to its end, best round), its ticks and
`cpu_per_tick_ms` (that round's), the load average, and, last, `ratio=<engine / xargs>` (goal ≤ 1.3). On
a shared machine the walls move with the load; the CPU figures much less.
Run: `.venv/bin/python bench/dispatch.py`.

`--db postgres` runs the engine side as two bot processes (`--processes N`) sharing a throwaway
PostgreSQL cluster (the tests' helper: `initdb` in a temporary folder, loopback, fsync off), each ticking
as `csb-bot serve` does (on lane exits, and on a timer, here every 0.1 s); one holds the lease and starts
the lanes, the other keeps asking for it. The wall runs from the run being queued to the engine closing
it (its `finished_at`), which this script looks for only now and then, so as not to load the machine.

`--executor ray` compares the bot on a Ray head with the same lanes submitted straight to Ray's Jobs
API (see `dispatch_ray.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the engine's drivers for tests and benchmarks

from idle import run_until_idle  # noqa: E402
from lane_waits import wait_all  # noqa: E402
from postgres_cluster import bench_cluster  # noqa: E402

from bot.csb.catalog import Catalog  # noqa: E402
from bot.csb.child_env import child_environ  # noqa: E402
from bot.csb.harbor_run import LaunchConfig, lane_command  # noqa: E402
from bot.domain.clock import SystemClock  # noqa: E402
from bot.domain.outcome import LaneStatus  # noqa: E402
from bot.domain.spec import RunParams, RunSpec  # noqa: E402
from bot.domain.states import RequestState  # noqa: E402
from bot.engine import Engine, build_engine  # noqa: E402
from bot.settings import EngineConfig  # noqa: E402
from bot.store import runs  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.models import RunRequest  # noqa: E402
from bot.store.records import NewLane, NewRun  # noqa: E402

TASKS = 264
PARALLEL = 32
SLEEP = "0.2"
ROUNDS = 2
# How often the bench looks for the end of a run that bot processes work on. The wall is read from the
# run's `finished_at`, so this only needs to be rare: a tight poll would take CPU from the processes timed.
FINISH_POLL_SEC = 0.25
RUN_DIR = "bench_haiku_20260101_000000_1"
SUITE_FILE = "benchmarks/suites/bench.json"
LANES = (("baseline", "baseline-local-direct", "none"), ("mcp", "mcp-remote-direct", "sourcegraph_full"))

# The bench's Harbor: sleep, then write the trial result.json where Harbor does (in the job folder
# `--job-name` names, if given), so the engine reads a real verdict
# (argv: run --path P --agent-import-path A --model M --jobs-dir J …).
HARBOR = """#!/bin/sh
sleep @SLEEP@
task=${3##*/}
job="job-$task"
prev=""
for arg in "$@"; do
    [ "$prev" = "--job-name" ] && job="$arg"
    prev="$arg"
done
trial="$9/$job/${task}__bench01"
mkdir -p "$trial"
verdict='"exception_info": null, "verifier_result": {"rewards": {"reward": 1.0}}'
echo "{\\"task_name\\": \\"$task\\", $verdict}" > "$trial/result.json"
""".replace("@SLEEP@", SLEEP)


def make_checkout(root: Path, tasks: int = TASKS, harbor_script: str = HARBOR) -> tuple[Path, Path]:
    """A CSB checkout of `tasks` bench tasks and the Harbor stand-in beside it (the Ray bench has its own)."""
    repo = root / "csb"
    names = [f"task-{index:03d}" for index in range(tasks)]
    for name in names:
        task = repo / "benchmarks" / "tasks" / "bench" / name
        task.mkdir(parents=True)
        (task / "task.toml").write_text(f'[task]\nid = "{name}"\ntime_limit_sec = 600\n')
    rows = [{"task_id": name, "suite": "bench", "task_dir": f"bench/{name}"} for name in names]
    (repo / SUITE_FILE).parent.mkdir(parents=True)
    (repo / SUITE_FILE).write_text(json.dumps({"suites": {"bench": tasks}, "tasks": rows}))
    harbor = root / "harbor"
    harbor.write_text(harbor_script)
    harbor.chmod(0o755)
    return repo, harbor


def lane_rows(tasks: int = TASKS) -> list[NewLane]:
    return [
        NewLane(
            pair_index=index,
            task_id=f"task-{index:03d}",
            suite="bench",
            task_path=f"benchmarks/tasks/bench/task-{index:03d}",
            role=role,
            config=config,
            mcp_type=mcp_type,
            timeout_sec=6000,
            jobs_dir=f"runs/staging/{RUN_DIR}/{config}",
            log_path=f"runs/staging/{RUN_DIR}/{config}/task-{index:03d}.log",
        )
        for index in range(tasks)
        for role, config, mcp_type in LANES
    ]


def commands(harbor: Path) -> list[str]:
    """The engine's lane commands, one line each, as xargs hands them to `env` (VAR=value then argv)."""
    lines = []
    for lane in lane_rows():
        argv = lane_command(str(harbor), lane.task_path, "anthropic/claude-haiku-4-5", lane.jobs_dir)
        lines.append(shlex.join([f"BASELINE_MCP_TYPE={lane.mcp_type}", *argv]))
    return lines


def run_xargs(repo: Path, harbor: Path) -> float:
    script = "\n".join(commands(harbor)) + "\n"
    start = time.perf_counter()
    subprocess.run(
        ["xargs", "-P", str(PARALLEL), "-L", "1", "env"], input=script.encode(), cwd=repo, check=True
    )
    return time.perf_counter() - start


def bench_spec(repo: Path, parallel: int = PARALLEL) -> RunSpec:
    """The approved spec, resolved from the checkout: the engine pins it again before the first lane."""
    return Catalog(repo).resolve(RunParams(suite_file=SUITE_FILE, parallel=parallel), parallel)


async def queue_bench_run(store: Store, repo: Path, tasks: int = TASKS, parallel: int = PARALLEL) -> int:
    """The approved run with its lanes (528 by default); returns its id."""
    now = datetime.now(UTC)
    spec = bench_spec(repo, parallel)
    async with store.write() as session:
        request = RunRequest(
            spec_json=spec.model_dump_json(),
            spec_hash=spec.spec_hash(),
            requester="U0BENCH",
            channel_id="C0BENCH",
            created_at=now,
            state=RequestState.APPROVED,
        )
        session.add(request)
        await session.flush()
        assert request.id is not None
        new = NewRun(request_id=request.id, run_dir=RUN_DIR, model="m", parallel=parallel, created_at=now)
        run = await runs.create_run(session, new, lane_rows(tasks))
    return run.id


def launch_config(root: Path, repo: Path, harbor: Path) -> LaunchConfig:
    return LaunchConfig(
        repo=repo,
        harbor=str(harbor),
        base_env=child_environ({"PATH": "/usr/bin:/bin", "HOME": str(root)}),
        timeout_multiplier=10,
        daytona=False,
    )


async def passed_once(store: Store, run_id: int) -> int:
    async with store.read() as session:
        lanes = await runs.run_lanes(session, run_id)
    return sum(1 for lane in lanes if lane.state is LaneStatus.PASSED and lane.attempt == 1)


@dataclass
class EngineCost:
    """The engine side's CPU seconds (all threads of its processes) and ticks over one run."""

    cpu_sec: float = 0.0
    ticks: int = 0

    def add(self, line: str) -> None:
        """A bot process's last line: `cost <cpu seconds> <ticks>`."""
        _, cpu, ticks = line.split()
        self.cpu_sec += float(cpu)
        self.ticks += int(ticks)


def counting_ticks(engine: Engine) -> list[int]:
    """Count the engine's ticks (the timer's, a lane exit's, a driver's) in the returned list's one item."""
    count = [0]
    tick = engine.tick

    async def counted() -> None:
        count[0] += 1
        await tick()

    engine.tick = counted  # type: ignore[method-assign]
    return count


async def run_engine(
    root: Path, repo: Path, harbor: Path, db: str = "bench.db"
) -> tuple[float, int, EngineCost]:
    store = Store(f"sqlite:///{root / db}")
    await store.create_tables()
    run_id = await queue_bench_run(store, repo)
    config = EngineConfig(global_slots=PARALLEL)
    engine = build_engine(store, launch_config(root, repo, harbor), config, SystemClock(), eager=False)
    ticks = counting_ticks(engine)
    cpu = time.process_time()
    start = time.perf_counter()
    await run_until_idle(engine, store)
    wall = time.perf_counter() - start
    cost = EngineCost(time.process_time() - cpu, ticks[0])
    passed = await passed_once(store, run_id)
    await store.close()
    return wall, passed, cost


async def run_engine_processes(
    url: str, root: Path, repo: Path, harbor: Path, processes: int
) -> tuple[float, int, EngineCost]:
    """The engine side as `processes` bot processes on one database; the wall from queueing to done."""
    store = Store(url)
    await store.create_tables()
    argv = [sys.executable, __file__, "--engine-of", url, "--root", str(root), "--harbor", str(harbor)]
    children = [
        await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        for _ in range(processes)
    ]
    try:
        for child in children:
            assert child.stdout is not None
            assert (await child.stdout.readline()).strip() == b"ready", "an engine process did not start"
        run_id = await queue_bench_run(store, repo)
        queued = time.time()  # as on SQLite: from the run queued (528 rows written) to its end
        for child in children:  # from here on each counts its CPU time and ticks
            assert child.stdin is not None
            child.stdin.write(b"go\n")
            await child.stdin.drain()
        while (finished := await _finished_at(store, run_id)) is None:
            await asyncio.sleep(FINISH_POLL_SEC)
        wall, passed = finished.timestamp() - queued, await passed_once(store, run_id)
        cost = EngineCost()
        for child in children:
            assert child.stdout is not None
            child.terminate()
            cost.add((await child.stdout.readline()).decode())
        return wall, passed, cost
    finally:
        for child in children:
            if child.returncode is None:
                child.terminate()
            await child.wait()
        await store.close()


async def _finished_at(store: Store, run_id: int) -> datetime | None:
    """When the engine closed the run, by its own clock (this host's): looking is not timing."""
    async with store.read() as session:
        run = await runs.get_run(session, run_id)
    return run.finished_at if run is not None and run.state.is_final else None


async def engine_process(url: str, root: Path, harbor: Path) -> None:
    """One bot process's engine, ticking on its timer and on lane exits as `csb-bot serve` does."""
    store = Store(url)
    config = EngineConfig(global_slots=PARALLEL, tick_seconds=0.1)
    engine = build_engine(store, launch_config(root, root / "csb", harbor), config, SystemClock(), eager=True)
    ticks = counting_ticks(engine)
    print("ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(15, stop.set)
    cpu = time.process_time()

    def start_counting() -> None:
        nonlocal cpu
        cpu, ticks[0] = time.process_time(), 0

    def wait_for_go() -> None:  # "go": the run is queued, counting starts
        if sys.stdin.readline():
            loop.call_soon_threadsafe(start_counting)

    threading.Thread(target=wait_for_go, daemon=True).start()  # never keeps the process from ending
    while not stop.is_set():
        await engine.tick()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), config.tick_seconds)
    print(f"cost {time.process_time() - cpu:.3f} {ticks[0]}", flush=True)
    await engine.shutdown()
    await wait_all(engine.executor)
    await store.close()


def main() -> int:
    """Alternate xargs and the engine `--rounds` times and keep each one's best wall: a busy host slows
    either side now and then, and the ratio should not be the noise of one unlucky round."""
    args = _parser().parse_args()
    if args.engine_of:
        asyncio.run(engine_process(args.engine_of, Path(args.root), Path(args.harbor)))
        return 0
    if args.executor == "ray":
        from dispatch_ray import compare
        from ray_cluster import ray_bin

        return compare(args.ray_address, Path(args.ray_bin) if args.ray_bin else ray_bin())
    cluster = bench_cluster() if args.db == "postgres" else None
    try:
        return _compare(cluster, args.processes, args.rounds)
    finally:
        if cluster is not None:
            cluster.stop()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", choices=("sqlite", "postgres"), default="sqlite", help="the engine's database"
    )
    parser.add_argument("--processes", type=int, default=2, help="bot processes with --db postgres")
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="rounds of each side; the best wall counts"
    )
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="ray: the bot on a Ray head against the same lanes submitted straight to Ray (dispatch_ray.py)",
    )
    parser.add_argument("--ray-address", help="with --executor ray: an existing head's dashboard URL")
    parser.add_argument(
        "--ray-bin", help="with --executor ray: the bin folder of a venv with ray (CSB_TEST_RAY)"
    )
    parser.add_argument("--engine-of", help=argparse.SUPPRESS)  # a child: one bot process's engine
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--harbor", help=argparse.SUPPRESS)
    return parser


def _compare(cluster: Any, processes: int, rounds: int) -> int:
    lanes = TASKS * len(LANES)
    xargs_walls: list[float] = []
    engine_walls: list[float] = []
    costs: list[EngineCost] = []
    with tempfile.TemporaryDirectory(prefix="csb-dispatch-bench-") as tmp:
        root = Path(tmp)
        repo, harbor = make_checkout(root)
        for round_no in range(rounds):
            xargs_walls.append(run_xargs(repo, harbor))
            written = len(list((repo / "runs").rglob("result.json")))
            shutil.rmtree(repo / "runs")
            if cluster is None:
                wall, passed, cost = asyncio.run(run_engine(root, repo, harbor, db=f"bench-{round_no}.db"))
            else:
                url = cluster.new_database()
                wall, passed, cost = asyncio.run(run_engine_processes(url, root, repo, harbor, processes))
            engine_walls.append(wall)
            costs.append(cost)
            shutil.rmtree(repo / "runs")
            if passed != lanes or written != lanes:
                print(
                    f"error: engine passed {passed}, xargs wrote {written}, of {lanes} lanes", file=sys.stderr
                )
                return 1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"engine wall: {min(engine_walls):.3f} s (rounds: {', '.join(f'{w:.2f}' for w in engine_walls)})")
    print(f"xargs wall: {min(xargs_walls):.3f} s (rounds: {', '.join(f'{w:.2f}' for w in xargs_walls)})")
    print(f"bot peak RSS: {peak_mb:.1f} MB")
    print(f"engine CPU: rounds {', '.join(f'{c.cpu_sec:.2f} s in {c.ticks} ticks' for c in costs)}")
    cheapest = min(costs, key=lambda cost: cost.cpu_sec)
    print(f"lanes={lanes}")
    print(f"claims_per_sec={lanes / min(engine_walls):.1f}")
    print(f"engine_cpu_sec={cheapest.cpu_sec:.2f}")
    print(f"ticks={cheapest.ticks}")
    print(f"cpu_per_tick_ms={1000 * cheapest.cpu_sec / max(cheapest.ticks, 1):.1f}")
    print(f"load_avg_1m={os.getloadavg()[0]:.1f}")
    print(f"ratio={min(engine_walls) / min(xargs_walls):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
