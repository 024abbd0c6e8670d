"""A year of the bot's history written into a database, for `bench/history.py` and its test.

The rows are the ones the store writes, made by the same code where there is some: the spec is one the
catalog resolves from the example bench (its lane configs, model, task file), widened to `tasks` tasks
over eleven suites; each run and its lanes come from `plan_run`, as an approval makes them; the outbox
targets from `domain/outbox_keys.py`. They go in by bulk inserts of the tables' Core rows, a few runs per
transaction, because the store's own paths (one run at a time, through the engine) would take days for
a year.

Each finished run has: its request (approved, one approval for staging, two for official), lanes that
passed, failed, errored or timed out, some after infrastructure retries (`attempt`, `infra_failures`),
its audit rows (requested, approval(s), approved, launched, finished), and its outbox rows as the
notifier leaves them: the card, one status redraw per pair and one App Home republish per two pairs
(the card changes on every lane end and edits are paced, so most ends cost a redraw), milestones, the
report, the DM, a few ephemeral replies, all sent; one run in ten has a reply set aside.
Where this differs from a real year: task ids are made up, the lanes' verdict columns (CSB's manifest
status, tokens) are filled with plausible numbers, not read from trials, and there are no promotions.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert, text

from bot.csb.catalog import Catalog
from bot.default_paths import EXAMPLE_BENCH
from bot.domain import outbox_keys
from bot.domain.policy import BOT_ACTOR
from bot.domain.spec import Category, LanePlan, RunParams, RunSpec, TaskRef
from bot.domain.states import LaneStatus, RequestState, RunState
from bot.services.run_plan import plan_run
from bot.store import summaries
from bot.store.db import Store
from bot.store.models import Approval, AuditEvent, Lane, OutboxItem, Run, RunRequest
from bot.store.narrow import table_of
from bot.store.records import OutboxKind, OutboxState

NOW = datetime(2026, 12, 1, tzinfo=UTC)
YEAR = timedelta(days=365)
CHANNEL = "C0CSBRUNS"
ADMIN = "U0ADMIN"  # has a run of their own every 40 runs: 50 in a year of 2,000
USERS = [f"U0USER{n:02d}" for n in range(20)]
APPROVERS = ["U0APPROVER1", "U0APPROVER2"]
SUITES = [
    "csb_sdlc_fix",
    "csb_sdlc_debug",
    "csb_sdlc_feature",
    "csb_sdlc_refactor",
    "csb_sdlc_test",
    "csb_sdlc_docs",
    "csb_org_onboarding",
    "csb_org_migration",
    "csb_org_security",
    "csb_org_incident",
    "csb_org_compliance",
]
MODELS = [
    "anthropic/claude-haiku-4-5-20251001",
    "anthropic/claude-sonnet-4-5-20250929",
    "anthropic/claude-opus-4-1-20250805",
]
RUNS_PER_TRANSACTION = 5
# A lane's fate: passed, failed, errored, timed out (weights), and how often it needed a retry.
FATES = [(LaneStatus.PASSED, 55), (LaneStatus.FAILED, 35), (LaneStatus.ERRORED, 6), (LaneStatus.TIMEOUT, 4)]
RETRIED = 0.08


# The columns an ended lane sets, as a lane not ended yet has them.
_NOT_ENDED: dict[str, Any] = {
    "attempt": 0,
    "infra_failures": 0,
    "started_at": None,
    "finished_at": None,
    "exit_code": None,
    "reward": None,
    "account": None,
    "host": None,
    "manifest_status": None,
    "mcp_calls": None,
    "input_tokens": None,
    "output_tokens": None,
    "cost_usd": None,
}


@dataclass(frozen=True)
class Filled:
    runs: int
    lanes: int
    outbox: int
    audit: int
    probe_run: int  # the admin's run under way, which the measured queries ask about
    pair: tuple[int, int] | None  # the two newest finished runs of the same lane configs, for `/csb compare`


def _base_spec() -> RunSpec:
    return Catalog(EXAMPLE_BENCH).resolve(RunParams(), 32)


def _spec(base: RunSpec, n: int, tasks: int) -> RunSpec:
    """Run `n`'s spec: the example's, with its model, category and lane configs varied, and `tasks`
    tasks over the eleven suites."""
    category = Category.OFFICIAL if n % 5 == 0 else Category.STAGING
    params = base.params.model_copy(update={"model": MODELS[n % len(MODELS)], "category": category})
    refs = tuple(
        TaskRef(
            task_id=f"{SUITES[t % len(SUITES)]}-task-{t:03d}",
            suite=SUITES[t % len(SUITES)],
            path=f"benchmarks/tasks/{SUITES[t % len(SUITES)]}/{SUITES[t % len(SUITES)]}-task-{t:03d}",
            time_limit_sec=1800,
            harbor_budget_sec=2400,
        )
        for t in range(tasks)
    )
    lanes = base.lanes
    if n % 4 == 3:  # another pair of configs, as a team that also runs the artifact lanes
        lanes = tuple(
            LanePlan(
                role=lane.role, config=lane.config.replace("-direct", "-artifact"), mcp_type=lane.mcp_type
            )
            for lane in lanes
        )
    mcp = [lane.config for lane in lanes if lane.config.startswith("mcp")]
    if mcp and base.params.full_config is not None:
        params = params.model_copy(update={"full_config": mcp[0]})
    return base.model_copy(update={"params": params, "tasks": refs, "lanes": lanes})


def _requester(n: int) -> str:
    return ADMIN if n % 40 == 0 else USERS[n % len(USERS)]


class _Run:
    """The rows of one run, from its number."""

    def __init__(self, base: RunSpec, n: int, runs: int, tasks: int, rng: random.Random) -> None:
        self.n, self.rng = n, rng
        self.id = n + 1
        self.spec = _spec(base, n, tasks)
        self.created = NOW - YEAR + (YEAR * n) / max(runs, 1)
        self.started = self.created + timedelta(minutes=rng.randint(2, 30))
        self.category = self.spec.params.category.value

    def request(self, *, active: bool = False) -> dict[str, Any]:
        return {
            "id": self.id,
            "state": RequestState.APPROVED,
            "spec_json": self.spec.model_dump_json(),
            "spec_hash": self.spec.spec_hash(),
            "requester": ADMIN if active else _requester(self.n),
            "channel_id": CHANNEL,
            "card_ts": f"{self.created.timestamp():.6f}",
            "decided_by": APPROVERS[0],
            "decided_at": self.created + timedelta(minutes=1),
            "created_at": self.created,
            "category": self.category,
            "checks_json": "{}",
            "trigger_id": f"history-{self.id}",
        }

    def approvals(self) -> list[dict[str, Any]]:
        who = APPROVERS if self.category == Category.OFFICIAL.value else APPROVERS[:1]
        at = self.created + timedelta(minutes=1)
        return [{"request_id": self.id, "revision": 1, "user_id": user, "at": at} for user in who]

    def run_and_lanes(self, *, active: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        new_run, new_lanes = plan_run(
            self.spec, self.id, self.created, timeout_multiplier=10, default_timeout_sec=4 * 3600
        )
        clock = self.started
        lanes = []
        for index, lane in enumerate(new_lanes):
            # One set of keys for executemany; the lane keeps its run's model, as `runs.create_run` writes it.
            row = asdict(lane) | {"run_id": self.id, "model": new_run.model} | _NOT_ENDED
            if active and index >= len(new_lanes) // 2:  # the probe run: half done, some running
                running = index < len(new_lanes) // 2 + min(16, max(1, len(new_lanes) // 4))
                row |= {"state": LaneStatus.RUNNING if running else LaneStatus.QUEUED}
                if running:
                    row |= {"attempt": 1, "started_at": clock, "host": "bench", "account": "account1"}
                lanes.append(row)
                continue
            row |= self._ended(clock)
            clock = row["finished_at"] - timedelta(seconds=self.rng.randint(300, 600))
            lanes.append(row)
        finished = None if active else max(lane["finished_at"] for lane in lanes)
        run = asdict(new_run) | {
            "id": self.id,
            "state": RunState.RUNNING if active else RunState.FINISHED,
            "started_at": self.started,
            "finished_at": finished,
            "attempts_done": sum(lane.get("attempt", 0) for lane in lanes),
            "infra_failures_total": sum(lane.get("infra_failures", 0) for lane in lanes),
        }
        return run, lanes

    def _ended(self, start: datetime) -> dict[str, Any]:
        rng = self.rng
        (state,) = rng.choices([f for f, _ in FATES], weights=[w for _, w in FATES])
        retries = rng.randint(1, 2) if rng.random() < RETRIED else 0
        seconds = rng.randint(240, 1800)
        return {
            "state": state,
            "attempt": 1 + retries,
            "infra_failures": retries,
            "started_at": start,
            "finished_at": start + timedelta(seconds=seconds),
            "exit_code": 0 if state in (LaneStatus.PASSED, LaneStatus.FAILED) else 1,
            "reward": 1.0 if state is LaneStatus.PASSED else 0.0,
            "account": f"account{rng.randint(1, 4)}",
            "host": "bench",
            "manifest_status": state.value,
            "mcp_calls": rng.randint(0, 40),
            "input_tokens": rng.randint(200_000, 2_000_000),
            "output_tokens": rng.randint(5_000, 60_000),
            "cost_usd": round(rng.uniform(0.2, 6.0), 4),
        }

    def audit(self, finished: datetime | None) -> list[dict[str, Any]]:
        spec_hash = self.spec.spec_hash()
        at = self.created
        events = [
            ("requested", _requester(self.n), at),
            *[("approval", user, at) for user in self.approvals_by()],
        ]
        events += [("approved", APPROVERS[0], at), ("launched", BOT_ACTOR, self.started)]
        if finished is not None:
            events.append(("finished", BOT_ACTOR, finished))
        return [
            {
                "request_id": self.id,
                "run_id": self.id if action in ("launched", "finished") else None,
                "action": action,
                "actor": actor,
                "at": when,
                "spec_hash": spec_hash,
                "revision": 1,
            }
            for action, actor, when in events
        ]

    def approvals_by(self) -> list[str]:
        return [row["user_id"] for row in self.approvals()]

    def outbox(self, lanes: list[dict[str, Any]], finished: datetime) -> list[dict[str, Any]]:
        """The rows the notifier left for this run, every one sent a few seconds after it was queued."""
        rows = [self._sent(OutboxKind.CARD, outbox_keys.card(self.id), self.created, request_id=self.id)]
        ends = sorted(lane["finished_at"] for lane in lanes)
        for pair, at in enumerate(ends[1::2]):
            rows.append(self._sent(OutboxKind.STATUS, outbox_keys.status(self.id), at, run_id=self.id))
            if pair % 2 == 0:
                rows.append(self._sent(OutboxKind.HOME, outbox_keys.EVERY_VIEWER, at))
        for which, at in [
            (outbox_keys.STARTED, self.started),
            *((str(q), ends[len(ends) * q // 100]) for q in (25, 50, 75)),
        ]:
            rows.append(
                self._sent(OutboxKind.NOTICE, outbox_keys.milestone(self.id, which), at, request_id=self.id)
            )
        rows.append(self._sent(OutboxKind.SUMMARY, outbox_keys.summary(self.id), finished, run_id=self.id))
        rows.append(self._sent(OutboxKind.DM, outbox_keys.finished_dm(self.id), finished, request_id=self.id))
        for reply in range(3):
            at = self.started + timedelta(minutes=30 * (reply + 1))
            rows.append(self._sent(OutboxKind.EPHEMERAL, outbox_keys.ephemeral(f"h{self.id}r{reply}"), at))
        if self.n % 10 == 9:
            aside = self._sent(OutboxKind.EPHEMERAL, outbox_keys.ephemeral(f"h{self.id}x"), self.started)
            rows.append(aside | {"state": OutboxState.DEAD, "sent_at": None, "error": "channel_not_found"})
        return rows

    def _sent(self, kind: OutboxKind, target: str, at: datetime, **ids: int) -> dict[str, Any]:
        sent = at + timedelta(seconds=self.rng.uniform(0.3, 4))
        return {
            "target": target,
            "kind": kind,
            "state": OutboxState.SENT,
            "request_id": ids.get("request_id"),
            "run_id": ids.get("run_id"),
            "text": '{"kind": "reply"}' if kind in (OutboxKind.EPHEMERAL, OutboxKind.DM) else None,
            "response_url": None,
            "user_id": None,
            "attempts": 1,
            "generation": 0,
            "next_attempt_at": at,
            "created_at": at,
            "sent_at": sent,
            "post_attempted_at": at if kind not in (OutboxKind.STATUS, OutboxKind.HOME) else None,
            "error": None,
        }


async def fill(store: Store, runs: int, tasks: int = 264, *, seed: int = 31) -> Filled:
    """`runs` finished runs over the year before `NOW`, then the admin's run under way (the probe)."""
    rng = random.Random(seed)
    base = _base_spec()
    counts = {"lanes": 0, "outbox": 0, "audit": 0}
    for first in range(0, runs, RUNS_PER_TRANSACTION):
        batch = [
            _Run(base, n, runs, tasks, rng) for n in range(first, min(first + RUNS_PER_TRANSACTION, runs))
        ]
        await _write(store, batch, counts, active=False)
    probe = _Run(base, runs, runs, tasks, rng)
    probe.created, probe.started = NOW - timedelta(hours=2), NOW - timedelta(hours=1, minutes=50)
    await _write(store, [probe], counts, active=True)
    await _advance_sequences(store)
    same_configs = [n + 1 for n in reversed(range(runs)) if n % 4 != 3][:2]
    pair = (same_configs[0], same_configs[1]) if len(same_configs) == 2 else None
    return Filled(runs, counts["lanes"], counts["outbox"], counts["audit"], probe.id, pair)


async def _write(store: Store, batch: list[_Run], counts: dict[str, int], *, active: bool) -> None:
    rows: dict[type[Any], list[dict[str, Any]]] = {
        RunRequest: [],
        Approval: [],
        Run: [],
        Lane: [],
        AuditEvent: [],
        OutboxItem: [],
    }
    for made in batch:
        run, lanes = made.run_and_lanes(active=active)
        rows[RunRequest].append(made.request(active=active))
        rows[Approval] += made.approvals()
        rows[Run].append(run)
        rows[Lane] += lanes
        rows[AuditEvent] += made.audit(run["finished_at"])
        if not active:
            rows[OutboxItem] += made.outbox(lanes, run["finished_at"])
    async with store.write() as session:
        for model, values in rows.items():
            for chunk in _chunks(values, 2000):
                await session.execute(insert(table_of(model)), chunk)
        if not active:  # each finished run's summary, as closing it writes one
            for run in rows[Run]:
                await summaries.record(session, run["id"])
    counts["lanes"] += len(rows[Lane])
    counts["outbox"] += len(rows[OutboxItem])
    counts["audit"] += len(rows[AuditEvent])


def _chunks(values: list[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


async def _advance_sequences(store: Store) -> None:
    """Requests were inserted with their ids (a run's id is its request's): PostgreSQL's sequence must
    move past them, or the next request the bot makes would take an id already used."""
    async with store.write() as session:
        if session.get_bind().dialect.name == "postgresql":
            await session.execute(
                text(
                    "SELECT setval(pg_get_serial_sequence('run_requests', 'id'), "
                    "(SELECT max(id) FROM run_requests))"
                )
            )
