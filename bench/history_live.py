"""The parts of `bench/history.py` that run the bot while they time it, each on the history's database and
the empty one alike: slash-command acks at concurrency 50 (`ack_latency.py`'s bot process, load and
drain), the engine's dispatch of 528 lanes (`dispatch.py`'s checkout, run and Harbor stand-in), the
report of that run, the ETA and the pairing guard, the outbox pruning while acks are timed, and an
upgrade that builds an index while the bot writes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path

import aiohttp
from ack_latency import (
    HOST,
    Child,
    Children,
    Sample,
    SignedCommands,
    bot_env,
    drain,
    free_port,
    load,
    percentile,
    serve_argv,
    wait_ready,
)
from dispatch import launch_config, make_checkout, passed_once, queue_bench_run, run_xargs
from history_fill import MODELS, NOW, _base_spec, _spec
from lane_waits import running_count, wait_any
from sqlalchemy import text

from bot.csb.counterparts import missing_counterparts
from bot.csb.trial_index import TrialIndex
from bot.default_paths import EXAMPLE_BENCH
from bot.domain.clock import ManualClock, SystemClock
from bot.domain.spec import Mode, RunSpec, TaskRef
from bot.engine import build_engine
from bot.engine.outbox_pruner import OutboxPruner, Pruned
from bot.heap import freeze_startup_heap
from bot.settings import EngineConfig
from bot.slack.outbound.report_loader import build_report_view
from bot.slack.views.report import paired_report
from bot.slack.views.report_csv import report_csv
from bot.store import queue, requests, runs
from bot.store.db import Store

PARALLEL = 32
KEEP_SENT = timedelta(days=30)
# The bots under load never prune on their own (their timer would take the history's rows away from
# the pruning this bench times); the bench prunes their database itself, while it sends them commands.
ACK_BOT_NOTIFIER = "keep_sent_days = 36500"
GOAL_PAIRING_MS = 50.0
UNKNOWN_TASKS = 8  # tasks of the one-lane run with no counterpart anywhere: the guard's search walks all


def p99(samples: list[float]) -> float:
    return percentile(samples, 99)


@dataclass(frozen=True)
class Timed:
    p99: float
    median: float


async def timed_ms(call: Callable[[], Awaitable[object]], samples: int) -> Timed:
    """`call` timed `samples` times after a first, warming call: its p99 and median in ms."""
    await call()
    walls = []
    for _ in range(samples):
        started = time.perf_counter()
        await call()
        walls.append((time.perf_counter() - started) * 1000)
    return Timed(p99(walls), statistics.median(walls))


async def analyze(store: Store) -> None:
    """PostgreSQL's planner statistics, as autovacuum keeps them on a database a year old: right after the
    bulk fill it has none, and plans the ETA's parts as bitmap scans (150 ms instead of 25)."""
    if store.engine.dialect.name == "postgresql":
        async with store.engine.connect() as conn:
            await conn.exec_driver_sql("ANALYZE")
            await conn.commit()


# -- the ETA and the report --------------------------------------------------------------------------


async def eta_ms(store: Store, run_id: int, samples: int) -> Timed:
    """p99 of the probe run's ETA (`queue.queue_figures`, what the card and `/csb status` show)."""

    async def eta() -> None:
        async with store.read() as session:
            await queue.queue_figures(session, run_id)

    return await timed_ms(eta, samples)


async def report_ms(store: Store, run_id: int, samples: int) -> Timed:
    """p99 of a finished run's report as the notifier builds it from the database: the run, its lanes,
    the view, the message and the full table's CSV (the charts are drawn in a worker from the view)."""

    async def report() -> None:
        async with store.read() as session:
            run = await runs.get_run(session, run_id)
            request = await requests.get_request(session, run_id)
            lanes = await runs.run_lanes(session, run_id)
        assert run is not None and request is not None
        view = build_report_view(run, request, lanes)
        paired_report(view)
        report_csv(view)

    return await timed_ms(report, samples)


# -- the pairing guard on a year of results ------------------------------------------------------------


def results_checkout(root: Path, runs_written: int, tasks: int) -> Path:
    """The example bench with `runs_written` finished staging runs of the history on disk: each run's
    baseline lane folder holds a trial result per task, passed, of the run's model (the history's runs
    cycle through three models). The MCP lane folders are there, empty: the search never enters them."""
    repo = root / "results-checkout"
    shutil.copytree(EXAMPLE_BENCH, repo, ignore=shutil.ignore_patterns("runs"))
    base = _base_spec()
    for n in range(runs_written):
        spec = _spec(base, n, tasks)
        run_dir = repo / "runs" / "staging" / f"history_{n:04d}"
        for lane in spec.lanes:
            (run_dir / lane.config).mkdir(parents=True, exist_ok=True)
        baseline = next(lane.config for lane in spec.lanes if lane.role == "baseline")
        job = run_dir / baseline / "2026-01-01__00-00-00"
        for task in spec.tasks:
            trial = job / f"{task.task_id[:32]}__h{n:06d}"
            trial.mkdir(parents=True)
            result = {
                "task_name": task.task_id,
                "config": {"agent": {"model_name": spec.params.model}},
                "exception_info": None,
                "verifier_result": {"rewards": {"reward": 1.0}},
                "finished_at": "2026-01-01T01:00:00Z",
            }
            (trial / "result.json").write_text(json.dumps(result))
    # A year's results are written over a year. Searches timed while the kernel still writes back the
    # million files and folders of the last minute measure that: measured here, right after the writing
    # the first of 30 searches took 56 ms and they eased down to 24 (median 30); after a sync, 32 then 25.
    os.sync()
    return repo


def one_lane_spec(tasks: int) -> RunSpec:
    """A one-lane (MCP only) run of the history's tasks and `UNKNOWN_TASKS` never run, of its first model."""
    spec = _spec(_base_spec(), 0, tasks)
    mcp = tuple(lane for lane in spec.lanes if lane.role != "baseline")
    new = tuple(
        TaskRef(task_id=f"csb_new-task-{n:03d}", suite="csb_new", path=f"benchmarks/tasks/csb_new/t{n}")
        for n in range(UNKNOWN_TASKS)
    )
    params = spec.params.model_copy(update={"mode": Mode.FULL_ONLY, "model": MODELS[0]})
    return spec.model_copy(update={"params": params, "lanes": mcp, "tasks": spec.tasks + new})


async def pairing_ms(
    repo: Path, spec: RunSpec, samples: int, *, missing: int = UNKNOWN_TASKS, kept: bool = True
) -> Timed:
    """p99 of the guard's counterpart search, in a thread as the approval card's checks run it, with the
    trial index kept between searches as the bot's checks keep it (`kept=False`: a fresh index each time,
    every folder listed, the full scan); the search must find `missing` tasks without a counterpart (with
    results on disk, the never-run ones). The first, warming search builds the kept index."""
    index = TrialIndex()

    async def search() -> list[str]:
        return await asyncio.to_thread(missing_counterparts, repo, spec, index if kept else None)

    found = await search()
    assert len(found) == missing, f"the search found {len(found)} tasks missing, not {missing}"
    return await timed_ms(search, samples)


def first_search_ms(repo: Path, spec: RunSpec) -> tuple[float, TrialIndex]:
    """The first search of a new index (the bot's after a restart): it lists every folder it walks."""
    index = TrialIndex()
    started = time.perf_counter()
    missing_counterparts(repo, spec, index)
    return (time.perf_counter() - started) * 1000, index


def searches_while_writing(repo: Path, spec: RunSpec, index: TrialIndex, samples: int) -> Timed:
    """p99 of searches with a run under way: before each, a trial result lands in its baseline job folder,
    so that folder (and, at first, the run's) is listed again, and stays untrusted while it is this fresh."""
    job = repo / "runs" / "staging" / "under_way" / "baseline-local-direct" / "2026-06-01__00-00-00"
    walls = []
    for n in range(samples + 1):
        task = spec.tasks[n % (len(spec.tasks) - UNKNOWN_TASKS)]
        trial = job / f"{task.task_id[:32]}__w{n:06d}"
        trial.mkdir(parents=True)
        result = {"task_name": task.task_id, "config": {"agent": {"model_name": "another/model"}}}
        (trial / "result.json").write_text(json.dumps(result))
        started = time.perf_counter()
        found = missing_counterparts(repo, spec, index)
        walls.append((time.perf_counter() - started) * 1000)
        assert len(found) == UNKNOWN_TASKS, f"the search found {len(found)} tasks missing"
    walls = walls[1:]  # the first listed the run's folders, new to the index
    return Timed(p99(walls), statistics.median(walls))


def print_counts(repo: Path, spec: RunSpec, index: TrialIndex) -> None:
    """What one more search with the kept index does: folders statted and listed, results read."""
    before = dataclasses.replace(index.counts)
    missing_counterparts(repo, spec, index)
    after = index.counts
    print(f"per_search_stats={after.stats - before.stats}\nper_search_reads={after.reads - before.reads}")
    print(f"per_search_listings={after.listings - before.listings}", flush=True)


def index_mib(repo: Path, spec: RunSpec) -> float:
    """The memory a new index holds after its first search (traced allocations still held)."""
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        _, index = first_search_ms(repo, spec)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    held = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert index.entries > 0
    return held / 2**20


async def pairing_bench(runs: int, tasks: int, samples: int, scan_samples: int) -> bool:
    """The pairing guard alone (`main`): the full scan against the kept index over `runs` runs' results,
    and the kept index over an empty checkout, in one run."""
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="csb-pairing-") as tmp:
        root = Path(tmp)
        spec = one_lane_spec(tasks)
        started = time.perf_counter()
        repo = results_checkout(root / "history", runs, tasks)
        print(f"runs={runs}\ntrial_folders={runs * tasks}")
        print(f"results_written_sec={time.perf_counter() - started:.1f}")
        freeze_startup_heap()  # as `serve` does once it listens (`bot/heap.py`)
        scan = await pairing_ms(repo, spec, scan_samples, kept=False)
        print(f"pairing_scan_p99_ms={scan.p99:.1f}\npairing_scan_median_ms={scan.median:.1f}", flush=True)
        first, index = first_search_ms(repo, spec)
        print(f"pairing_first_ms={first:.1f}\nindex_keys={index.entries}", flush=True)
        kept = await pairing_ms(repo, spec, samples)
        print(f"pairing_p99_ms={kept.p99:.1f}\npairing_median_ms={kept.median:.1f}", flush=True)
        print_counts(repo, spec, index)
        writing = searches_while_writing(repo, spec, index, samples)
        print(
            f"pairing_p99_ms_while_writing={writing.p99:.1f}\npairing_median_ms_while_writing={writing.median:.1f}"
        )
        empty = await pairing_ms(
            results_checkout(root / "empty", 0, tasks), spec, samples, missing=len(spec.tasks)
        )
        print(f"pairing_p99_ms_empty={empty.p99:.1f}\npairing_median_ms_empty={empty.median:.1f}")
        print(f"index_mib={index_mib(repo, spec):.1f}")
    load_after = os.getloadavg()
    print(f"load_average={load[0]:.1f}\nload_average_after={load_after[0]:.1f}")
    met = kept.p99 < GOAL_PAIRING_MS and writing.p99 < GOAL_PAIRING_MS
    print(f"goals_met={met}")
    return met


# -- the engine's dispatch -----------------------------------------------------------------------------


async def close_probe(store: Store, run_id: int) -> None:
    """The probe run cancelled, its unfinished lanes with it: an engine started on the history would
    otherwise start its lanes (they are older, so first) before the dispatch run's."""
    async with store.write() as session:
        await session.execute(
            text(
                "UPDATE lanes SET state = 'cancelled' WHERE run_id = :run AND state IN ('queued', 'running')"
            ),
            {"run": run_id},
        )
        await session.execute(
            text("UPDATE runs SET state = 'cancelled', finished_at = :now WHERE id = :run"),
            {"run": run_id, "now": NOW},
        )


async def engine_wall(store: Store, root: Path, repo: Path, harbor: Path) -> tuple[float, int]:
    """`dispatch.py`'s run of 528 lanes through the engine on `store`; the wall from queueing it to the
    engine closing it, and the run's id. Ticks on each lane's exit, as `dispatch.run_engine`; done when
    the run is closed (not when the whole database is quiet, which reads every lane of the history)."""
    config = EngineConfig(global_slots=PARALLEL)
    engine = build_engine(store, launch_config(root, repo, harbor), config, SystemClock(), eager=False)
    started = time.perf_counter()
    run_id = await queue_bench_run(store, repo)
    while True:
        await engine.tick()
        async with store.read() as session:
            run = await runs.get_run(session, run_id)
        if run is not None and run.state.is_final and running_count(engine.executor) == 0:
            break
        if running_count(engine.executor):
            await asyncio.wait_for(wait_any(engine.executor, quiet=0.05, longest=0.02), 120)
    wall = time.perf_counter() - started
    passed = await passed_once(store, run_id)
    assert passed == 528, f"the engine passed {passed} of 528 lanes"
    return wall, run_id


@dataclass
class Dispatch:
    xargs: list[float] = field(default_factory=list)
    empty: list[float] = field(default_factory=list)
    full: list[float] = field(default_factory=list)
    runs: tuple[int, int] = (0, 0)  # a dispatched run of each database, for the report

    def ratios(self) -> tuple[float, float]:
        """Engine over xargs, each side's best wall: the history's, the empty database's."""
        return min(self.full) / min(self.xargs), min(self.empty) / min(self.xargs)


async def dispatch(stores: tuple[Store, Store], root: Path, rounds: int) -> Dispatch:
    """Rounds of xargs, the engine on the empty database, the engine on the history; best walls."""
    repo, harbor = make_checkout(root / "dispatch")
    found = Dispatch()
    for _ in range(rounds):
        found.xargs.append(await asyncio.to_thread(run_xargs, repo, harbor))
        shutil.rmtree(repo / "runs")
        empty_wall, empty_run = await engine_wall(stores[0], root, repo, harbor)
        shutil.rmtree(repo / "runs")
        full_wall, full_run = await engine_wall(stores[1], root, repo, harbor)
        shutil.rmtree(repo / "runs")
        found.empty.append(empty_wall)
        found.full.append(full_wall)
        found.runs = (empty_run, full_run)
    return found


# -- an index built while the bot writes -----------------------------------------------------------------


@dataclass(frozen=True)
class Upgrade:
    seconds: float
    writes: int
    longest_write_ms: float


async def upgrade_while_writing(store: Store, writer: Store) -> Upgrade:
    """Migration 0011 (an index on `lanes`) run again on the history through the bot's upgrade, while
    another connection, as a bot would, writes a lane back to back: the longest write is how long the
    upgrade blocked the bot."""
    async with store.write() as session:
        await session.execute(text("DROP INDEX ix_lanes_model_finished"))
        await session.execute(text("UPDATE alembic_version SET version_num = '0010'"))
    async with writer.read() as session:
        lane_id = (await session.execute(text("SELECT max(id) FROM lanes"))).scalar_one()
    done = asyncio.Event()
    walls: list[float] = []

    async def write() -> None:
        while not done.is_set():
            started = time.perf_counter()
            async with writer.write() as session:
                await session.execute(
                    text("UPDATE lanes SET reason = :why WHERE id = :id"), {"why": "written", "id": lane_id}
                )
            walls.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.005)

    writing = asyncio.create_task(write())
    started = time.perf_counter()
    try:
        await store.create_tables()
    finally:
        seconds = time.perf_counter() - started
        done.set()
        await writing
    return Upgrade(seconds, len(walls), max(walls, default=0.0))


# -- acks, and the pruning while they are timed -----------------------------------------------------------


@dataclass
class Acks:
    empty: Sample = field(default_factory=Sample)
    full: Sample = field(default_factory=Sample)
    while_pruning: Sample = field(default_factory=Sample)
    pruned: Pruned | None = None
    rounds: list[tuple[float, float]] = field(default_factory=list)  # each round's p99s, history and empty

    @property
    def ratio(self) -> float:
        return p99(self.full.latencies_ms) / p99(self.empty.latencies_ms)


@dataclass
class AckBot:
    url: str  # its events URL
    standin: str
    process: Child
    sent: int = 0


async def _start_bots(children: Children, urls: tuple[str, str]) -> list[AckBot]:
    """A Slack stand-in and a `csb-bot serve` per database (`ack_latency.py`'s, with its database URL)."""
    bots = []
    async with aiohttp.ClientSession() as session:
        for name, url in zip(("empty", "history"), urls, strict=True):
            standin_port, bot_port = free_port(), free_port()
            standin_url = f"http://{HOST}:{standin_port}"
            standin = children.start(f"standin-{name}", serve_argv("standin", standin_port))
            env = bot_env(f"{standin_url}/api/", children.workdir / f"{name}.db", database_url=url)
            env["CSB_CONFIG"] = _with_config(Path(env["CSB_CONFIG"]), name)
            argv = [sys.executable, "-m", "bot", "serve", "--port", str(bot_port)]
            bot = children.start(f"bot-{name}", argv, env)
            await wait_ready(session, f"{standin_url}/bench/stats", standin)
            await wait_ready(session, f"http://{HOST}:{bot_port}/healthz", bot)
            bots.append(AckBot(f"http://{HOST}:{bot_port}/slack/events", standin_url, bot))
    return bots


def _with_config(config: Path, name: str) -> str:
    own = config.with_name(f"{name}.toml")
    own.write_text(config.read_text().replace("[notifier]\n", f"[notifier]\n{ACK_BOT_NOTIFIER}\n", 1))
    return str(own)


async def _phase(session: aiohttp.ClientSession, bot: AckBot, total: int, index: int) -> Sample:
    """`total` commands at concurrency 50; then the bot's cards are waited for, so its backlog never
    lands on the other database's turn."""
    commands = SignedCommands(bot.standin, prefix=f"{index}-{bot.sent}")
    sample = await load(session, bot.url, commands, total, 50)
    bot.sent += total
    try:
        await drain(session, bot.standin, bot.sent, bot.process)
    except RuntimeError as exc:  # the acks were timed; a backlog not posted in time is said, not fatal
        print(f"ack_drain_incomplete={str(exc).splitlines()[0]}", flush=True)
    return sample


async def acks(children: Children, urls: tuple[str, str], rounds: int, requests_per_phase: int) -> Acks:
    """Alternating phases on the empty database's bot and the history's; then the history's bot takes
    phase after phase while the bench prunes that database's outbox, each batch's hold timed."""
    bots = await _start_bots(children, urls)
    found = Acks()
    timeout = aiohttp.ClientTimeout(total=30)
    connector = aiohttp.TCPConnector(limit=100, limit_per_host=0)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        # Warm, untimed, with a phase of the timed size: each bot's pool has grown to what a burst of 50
        # needs and its connections' page caches are filled (1.4 GB of history against 0.8 MB) before any
        # phase is timed, as in a bot that has served for a while.
        for index, bot in enumerate(bots):
            await _phase(session, bot, requests_per_phase, index)
        for _ in range(rounds):
            empty = await _phase(session, bots[0], requests_per_phase, 0)
            full = await _phase(session, bots[1], requests_per_phase, 1)
            found.empty.extend(empty)
            found.full.extend(full)
            found.rounds.append((p99(full.latencies_ms), p99(empty.latencies_ms)))
        pruning = asyncio.create_task(prune_in_a_process(urls[1]))
        while not pruning.done():
            found.while_pruning.extend(await _phase(session, bots[1], requests_per_phase, 1))
        found.pruned = await pruning
    failures = found.empty.non_200 + found.full.non_200 + found.while_pruning.non_200
    assert failures == 0, f"{failures} commands were not answered 200"
    return found


async def prune_in_a_process(url: str) -> Pruned:
    """The outbox pruning of the history as the timer holder does it, in a process of its own: in this
    one it would share an event loop with the load, whose work would lengthen its holds on the lock."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "_prune", url, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    assert child.returncode == 0, f"the pruning process exited with {child.returncode}"
    return Pruned(**json.loads(out.decode().strip().splitlines()[-1]))


async def _prune(url: str) -> Pruned:
    store = Store(url)
    # The timer holder prunes in the serving bot, whose startup heap is frozen (`bot/heap.py`): without it a
    # full collection here walks the imports' 100,000-odd objects inside a batch, 50 to 140 ms of its hold
    # (measured: the longest of 920 batches 48 to 143 ms, against 10 to 12 ms with the heap frozen).
    freeze_startup_heap()
    try:
        return await OutboxPruner(store, ManualClock(NOW), KEEP_SENT, may_prune=lambda: True).prune()
    finally:
        await store.close()


def main() -> int:
    """The pairing guard's figures alone; `bench/history.py` runs the rest of this file's parts."""
    parser = argparse.ArgumentParser(
        description="The pairing guard's counterpart search over a checkout holding `--runs` runs' results "
        "(each run's baseline trials, one per task): the full scan, the first search of a new index, the "
        "kept index (alone and while a run under way writes trials), and the kept index on an empty "
        f"checkout. Goal: p99 under {GOAL_PAIRING_MS:.0f} ms."
    )
    parser.add_argument("--runs", type=int, default=200, help="finished runs' results on disk (a year: 2000)")
    parser.add_argument("--tasks", type=int, default=264, help="tasks per run")
    parser.add_argument("--samples", type=int, default=30, help="timed searches with the kept index")
    parser.add_argument("--scan-samples", type=int, default=5, help="timed full scans (seconds each a year)")
    args = parser.parse_args()
    return 0 if asyncio.run(pairing_bench(args.runs, args.tasks, args.samples, args.scan_samples)) else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["_prune"]:
        print(json.dumps(asdict(asyncio.run(_prune(sys.argv[2])))))
    else:
        sys.exit(main())
