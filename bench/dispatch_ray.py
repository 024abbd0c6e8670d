"""Dispatch overhead on a Ray cluster: `bench/dispatch.py --executor ray`.

The same lanes (TASKS tasks × 2 lanes, each a Harbor stand-in that sleeps SLEEP seconds) run twice on
one Ray head, PARALLEL at a time: through the engine with the Ray executor (claims, one job per lane
with the lane wrapper, one listing per tick, result reading, a real SQLite file), and as the same lane
commands submitted straight to Ray's Jobs API by a plain loop (submit while fewer than PARALLEL run,
list the jobs every POLL seconds). Both poll Ray at the same pace: Ray tells nobody when a job ends.

Per lane, the start latency is from the moment the lane was handed out (the engine's claim; the plain
loop's submit) to the moment the Harbor stand-in started on the node (it writes the time first thing).
Prints both walls, p50 and p99 of each side's start latencies and, last, `ratio=<bot wall / bare wall>`.

Sized for a 2-core machine: every Ray job costs a supervisor process and its start (about 1 s of CPU
each), so 16 five-second lanes at parallel 4 take about half a minute a side. The head is a throwaway
one-node head like the tests' (the venv named by CSB_TEST_RAY, or `--ray-bin`), or `--ray-address`.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from dispatch import LANES, lane_rows, make_checkout, queue_bench_run  # noqa: E402
from idle import run_until_idle  # noqa: E402

from bot.csb.child_env import child_environ  # noqa: E402
from bot.csb.harbor_run import LaunchConfig, job_name, lane_command  # noqa: E402
from bot.domain.clock import SystemClock  # noqa: E402
from bot.domain.outcome import LaneStatus  # noqa: E402
from bot.engine import build_engine  # noqa: E402
from bot.executors.ray_settings import RaySettings  # noqa: E402
from bot.settings import EngineConfig  # noqa: E402
from bot.store import runs  # noqa: E402
from bot.store.db import Store  # noqa: E402

TASKS = 8
PARALLEL = 4
SLEEP = "5"
POLL = 0.2  # the Ray executor's own listing pace (`bot.executors.ray.POLL_SEC`)

# Writes when it started (epoch seconds) next to its job folder, sleeps, then writes the trial
# result.json where Harbor does (argv: run --path P --agent-import-path A --model M --jobs-dir J …).
HARBOR = """#!/bin/sh
now=$(date +%s.%N)
task=${3##*/}
job="job-$task"
prev=""
for arg in "$@"; do
    [ "$prev" = "--job-name" ] && job="$arg"
    prev="$arg"
done
mkdir -p "$9"
echo "$now" > "$9/$job.started"
sleep @SLEEP@
trial="$9/$job/${task}__bench01"
mkdir -p "$trial"
verdict='"exception_info": null, "verifier_result": {"rewards": {"reward": 1.0}}'
echo "{\\"task_name\\": \\"$task\\", $verdict}" > "$trial/result.json"
""".replace("@SLEEP@", SLEEP)


def started_at(repo: Path, jobs_dir: str, job: str) -> float:
    return float((repo / jobs_dir / f"{job}.started").read_text().strip())


def percentiles(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):.3f} s, p99 {p99:.3f} s"


# --- the bot: the engine with the Ray executor ------------------------------------------------------


async def run_bot(root: Path, repo: Path, harbor: Path, address: str) -> tuple[float, list[float]]:
    store = Store(f"sqlite:///{root / 'bench.db'}")
    await store.create_tables()
    run_id = await queue_bench_run(store, repo, TASKS, PARALLEL)
    launch = LaunchConfig(
        repo=repo,
        harbor=str(harbor),
        base_env=child_environ({"PATH": "/usr/bin:/bin", "HOME": str(root)}),
        timeout_multiplier=10,
        daytona=False,
    )
    config = EngineConfig(global_slots=PARALLEL)
    ray = RaySettings(address=address)
    engine = build_engine(store, launch, config, SystemClock(), eager=False, executor_settings=ray)
    start = time.time()
    await run_until_idle(engine, store)
    wall = time.time() - start
    async with store.read() as session:
        lanes = await runs.run_lanes(session, run_id)
    await engine.executor.close()
    await store.close()
    if any(lane.state is not LaneStatus.PASSED or lane.attempt != 1 for lane in lanes):
        raise SystemExit(f"error: the bot's lanes: {sorted({lane.state.value for lane in lanes})}")
    latencies = [
        started_at(repo, lane.jobs_dir, job_name(run_id, lane.id, 1))
        - (lane.started_at or datetime.now(UTC)).replace(tzinfo=UTC).timestamp()
        for lane in lanes
    ]
    return wall, latencies


# --- bare Ray: the same commands, submitted by a plain loop -----------------------------------------


def bare_jobs(repo: Path, harbor: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(jobs dir, job name, the Jobs API submission) per lane: the lane command run in the checkout."""
    jobs = []
    for index, lane in enumerate(lane_rows(TASKS)):
        job = f"bare_{index}"
        argv = lane_command(str(harbor), lane.task_path, "anthropic/claude-haiku-4-5", lane.jobs_dir, job=job)
        body = {
            "entrypoint": f"cd {shlex.quote(str(repo))} && exec {shlex.join(argv)}",
            "submission_id": f"bare-{time.time_ns()}-{index}",
            "runtime_env": {"env_vars": {"BASELINE_MCP_TYPE": lane.mcp_type, "PATH": "/usr/bin:/bin"}},
        }
        jobs.append((lane.jobs_dir, job, body))
    return jobs


async def run_bare(repo: Path, harbor: Path, address: str) -> tuple[float, list[float]]:
    todo = bare_jobs(repo, harbor)
    submitted: dict[str, tuple[str, str, float]] = {}  # submission id → jobs dir, job, submit time
    running: set[str] = set()
    async with aiohttp.ClientSession() as http:
        start = time.time()
        while todo or running:
            while todo and len(running) < PARALLEL:
                jobs_dir, job, body = todo.pop(0)
                submitted[body["submission_id"]] = (jobs_dir, job, time.time())
                async with http.post(f"{address}/api/jobs/", json=body) as answer:
                    answer.raise_for_status()
                running.add(body["submission_id"])
            await asyncio.sleep(POLL)
            async with http.get(f"{address}/api/jobs/") as answer:
                listed = {
                    job["submission_id"]: job for job in await answer.json() if job.get("submission_id")
                }
            for submission_id in list(running):
                status = listed[submission_id]["status"]
                if status in ("SUCCEEDED", "FAILED", "STOPPED"):
                    if status != "SUCCEEDED":
                        raise SystemExit(f"error: bare job {submission_id} {status}")
                    running.discard(submission_id)
        wall = time.time() - start
    latencies = [started_at(repo, jobs_dir, job) - sent for jobs_dir, job, sent in submitted.values()]
    return wall, latencies


# --- the comparison -------------------------------------------------------------------------------


def compare(address: str | None, ray_bin: Path | None) -> int:
    head = None
    if address is None:
        from ray_cluster import RayHead

        if ray_bin is None:
            raise SystemExit(
                "--executor ray needs --ray-address, or a venv with ray (CSB_TEST_RAY or --ray-bin)"
            )
        head = RayHead(ray_bin)
        head.start()
        address = head.dashboard_url
    try:
        with tempfile.TemporaryDirectory(prefix="csb-dispatch-ray-") as tmp:
            root = Path(tmp)
            repo, harbor = make_checkout(root, TASKS, HARBOR)
            bare_wall, bare_latencies = asyncio.run(run_bare(repo, harbor, address))
            shutil.rmtree(repo / "runs")
            bot_wall, bot_latencies = asyncio.run(run_bot(root, repo, harbor, address))
    finally:
        if head is not None:
            head.stop()
    lanes = TASKS * len(LANES)
    print(f"lanes={lanes} parallel={PARALLEL} lane={SLEEP} s")
    print(f"bot on ray wall: {bot_wall:.3f} s; start latency {percentiles(bot_latencies)}")
    print(f"bare ray wall: {bare_wall:.3f} s; start latency {percentiles(bare_latencies)}")
    print(f"ratio={bot_wall / bare_wall:.3f}")
    return 0
