"""The bot's answers with a year of history behind it, against an empty database, in one run.

Two databases of the kind `--db` names: one holds only the probe (an admin's run under way, half its
lanes done), the other `--runs` finished runs of `--tasks` tasks x 2 lanes before it
(`bench/history_fill.py`: a year is 2,000 runs, about 1,000,000 lanes). On each, the queries behind
these answers are timed `--samples` times through the services the listeners call and the views that
word them:

- `/csb status <run>` (the probe: its lanes and its ETA, from comparable finished lanes),
- `/csb status` (every active run), `/csb runs` (the newest finished ones), `/csb audit <run>`,
- App Home for the admin (waiting requests, their latest runs: one run in 40 is theirs, 50 in a
  year; the queue, the latest official results),
- `/csb compare <a> <b>` of the two newest finished runs of the same lane configs (with history only:
  the empty database has none), and `/csb coverage --staging` over the example bench's selection (the
  finished staging runs the admin may see, newest first).

Then the time migration 0008 (the lanes' model and three indexes on `lanes`) takes on the history
through the bot's upgrade,
the bytes each run adds (`csb-bot db stats`' measure, the history's database minus the empty one, per
run), and the outbox pruning of that history (`[notifier] keep_sent_days`, 30 days) with its longest
batch. Prints one `name=value` per figure and, last, `goals_met=`: every p99 under 300 ms and no
prune batch holding the write lock for more than 50 ms.

    .venv/bin/python bench/history.py [--db sqlite|postgres] [--runs 40] [--tasks 264] [--samples 30]

The figures are wall time on whatever machine runs it: on a shared, loaded one they move with the load.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the throwaway PostgreSQL cluster of the tests

from history_fill import ADMIN, CHANNEL, NOW, Filled, fill  # noqa: E402
from postgres_cluster import bench_cluster  # noqa: E402

from bot.csb.catalog import Catalog  # noqa: E402
from bot.csb.child_env import child_environ  # noqa: E402
from bot.default_paths import EXAMPLE_BENCH  # noqa: E402
from bot.domain.clock import ManualClock  # noqa: E402
from bot.domain.policy import Actor, PolicyConfig  # noqa: E402
from bot.domain.redact import Redactor  # noqa: E402
from bot.engine.outbox_pruner import OutboxPruner, Pruned  # noqa: E402
from bot.services.checks import CheckRunner  # noqa: E402
from bot.services.compare import CompareService  # noqa: E402
from bot.services.compare_args import CompareArgs, RunsArgs  # noqa: E402
from bot.services.coverage import CoverageService  # noqa: E402
from bot.services.coverage_args import CoverageArgs  # noqa: E402
from bot.services.queries import QueryService, Viewer  # noqa: E402
from bot.services.requests import RunRequestService  # noqa: E402
from bot.settings import EngineConfig  # noqa: E402
from bot.slack.outbound.home_loader import load_home  # noqa: E402
from bot.slack.views.compare import compare_text, runs_text  # noqa: E402
from bot.slack.views.coverage import coverage_text  # noqa: E402
from bot.slack.views.home import home_tab  # noqa: E402
from bot.slack.views.replies import audit_text, status_text  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.sizes import measure  # noqa: E402

GOAL_P99_MS = 300.0
GOAL_LOCK_MS = 50.0
KEEP_SENT = timedelta(days=30)


class Answers:
    """The answers measured, each as the listener's service and the view would produce it."""

    def __init__(self, store: Store, probe_run: int, pair: tuple[int, int] | None = None) -> None:
        self.store = store
        self.probe = probe_run
        self.pair = pair
        self.policy = PolicyConfig(admins=(ADMIN,))
        checks = CheckRunner(EXAMPLE_BENCH, child_environ({}), daytona=False, redact=Redactor(), timeout_s=60)
        catalog = Catalog(EXAMPLE_BENCH)
        self.queries = QueryService(store, catalog, checks, self.policy)
        self.compare = CompareService(store, EXAMPLE_BENCH, self.policy)
        clock = ManualClock(NOW)
        submitter = RunRequestService(store, catalog, checks, self.policy, EngineConfig(), clock)
        self.coverage_service = CoverageService(store, EXAMPLE_BENCH, self.policy, submitter, clock)
        self.viewer = Viewer(Actor(user_id=ADMIN), CHANNEL)

    async def status_run(self) -> str:
        return status_text([await self.queries.run_progress(self.probe, self.viewer)])

    async def status_all(self) -> str:
        return status_text(await self.queries.active_runs(self.viewer))

    async def runs(self) -> str:
        return runs_text(await self.compare.runs(RunsArgs(), self.viewer))

    async def audit(self) -> str:
        request, events = await self.queries.audit_trail(self.probe, self.viewer)
        assert events is not None
        return audit_text(request.id, events)

    async def home(self) -> Any:
        async with self.store.read() as session:
            view = await load_home(session, ADMIN, self.policy, NOW)
        return home_tab(view)

    async def compare_runs(self) -> str:
        assert self.pair is not None
        a, b = self.pair
        return compare_text(await self.compare.compare(CompareArgs(a, b), self.viewer))

    async def coverage(self) -> list[str]:
        return coverage_text(await self.coverage_service.coverage(CoverageArgs(staging=True), self.viewer))

    def each(self) -> dict[str, Callable[[], Awaitable[object]]]:
        answers: dict[str, Callable[[], Awaitable[object]]] = {
            "status": self.status_run,
            "status_all": self.status_all,
            "runs": self.runs,
            "audit": self.audit,
            "home": self.home,
            "coverage": self.coverage,
        }
        if self.pair is not None:
            answers["compare"] = self.compare_runs
        return answers


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


async def timed(answers: Answers, samples: int) -> dict[str, float]:
    found = {}
    for name, answer in answers.each().items():
        await answer()  # warm: the first call pays for imports and the pool's connection
        walls = []
        for _ in range(samples):
            started = time.perf_counter()
            await answer()
            walls.append((time.perf_counter() - started) * 1000)
        found[name] = p99(walls)
    return found


async def migration_seconds(store: Store) -> float:
    """Migration 0008 (each lane's model filled in from its run, and the estimate's three indexes on
    `lanes`) run again on the history, through the bot's own upgrade: the database set back to 0007
    without them, then upgraded as `serve` does at start (the later revisions find their work done).
    On PostgreSQL writes to `lanes` wait this long."""
    async with store.write() as session:
        for index in ("ix_lanes_history", "ix_lanes_suite_finished", "ix_lanes_finished"):
            await session.execute(text(f"DROP INDEX {index}"))
        await session.execute(text("ALTER TABLE lanes DROP COLUMN model"))
        await session.execute(text("UPDATE alembic_version SET version_num = '0007'"))
    started = time.perf_counter()
    await store.create_tables()
    return time.perf_counter() - started


async def prune(store: Store) -> Pruned:
    return await OutboxPruner(store, ManualClock(NOW), KEEP_SENT, may_prune=lambda: True).prune()


async def one_database(url: str, runs: int, tasks: int, samples: int) -> tuple[Filled, dict[str, float], int]:
    store = Store(url)
    await store.create_tables()
    try:
        started = time.perf_counter()
        filled = await fill(store, runs, tasks)
        if runs:
            print(f"fill_sec={time.perf_counter() - started:.1f}", flush=True)
        figures = await timed(Answers(store, filled.probe_run, filled.pair), samples)
        size = await measure(store)
        if runs:
            print(f"migration_0008_sec={await migration_seconds(store):.2f}", flush=True)
        return filled, figures, size.total_bytes
    finally:
        await store.close()


async def bench(urls: tuple[str, str], runs: int, tasks: int, samples: int) -> bool:
    _, empty, empty_bytes = await one_database(urls[0], 0, tasks, samples)
    filled, full, full_bytes = await one_database(urls[1], runs, tasks, samples)
    print(f"runs={filled.runs}\nlanes={filled.lanes}\noutbox_rows={filled.outbox}\naudit_rows={filled.audit}")
    for name in full:
        print(f"{name}_p99_ms={full[name]:.1f}")
        if name in empty:
            print(f"{name}_p99_ms_empty={empty[name]:.1f}")
    print(f"db_bytes_per_run={(full_bytes - empty_bytes) / max(runs, 1):.0f}")
    store = Store(urls[1])
    try:
        pruned = await prune(store)
        after = (await measure(store)).total_bytes
    finally:
        await store.close()
    print(f"pruned_rows={pruned.rows}\nprune_batches={pruned.batches}")
    print(
        f"prune_max_lock_ms={pruned.longest_batch_ms:.1f}\nprune_median_lock_ms={pruned.median_batch_ms:.1f}"
    )
    print(f"db_bytes_after_prune={after}")
    missed = [
        f"{name} p99 {ms:.0f} ms >= {GOAL_P99_MS:.0f}" for name, ms in full.items() if ms >= GOAL_P99_MS
    ]
    if pruned.longest_batch_ms > GOAL_LOCK_MS:
        missed.append(f"a prune batch held the lock {pruned.longest_batch_ms:.0f} ms > {GOAL_LOCK_MS:.0f}")
    print(f"goals_met={'true' if not missed else 'false'}" + "".join(f" ({why})" for why in missed))
    return not missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--runs", type=int, default=40, help="finished runs of history (a year: 2000)")
    parser.add_argument("--tasks", type=int, default=264, help="tasks per run (two lanes each)")
    parser.add_argument("--samples", type=int, default=30, help="timed answers of each kind per database")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="csb-history-bench-") as tmp:
        cluster = bench_cluster() if args.db == "postgres" else None
        try:
            if cluster is None:
                urls = (f"sqlite:///{tmp}/empty.db", f"sqlite:///{tmp}/history.db")
            else:
                urls = (cluster.new_database(migrated=False), cluster.new_database(migrated=False))
            met = asyncio.run(bench(urls, args.runs, args.tasks, args.samples))
        finally:
            if cluster is not None:
                cluster.stop()
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
