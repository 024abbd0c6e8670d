"""Lanes: claimed, started, stopped and settled by the engine, each change a guarded UPDATE.

Batches (many lanes claimed or settled in one tick) first lock the rows still in the state they must
leave (`SELECT … FOR UPDATE`: row locks on PostgreSQL; SQLite's write transaction already holds the
database), then move exactly those with one statement run once per lane, each row still guarded on
its state. The locked ids say which rows moved (a driver's row count of a statement run with many
parameter sets is not to be trusted: asyncpg has none). That statement's text is the same for one lane
or thirty, so it is compiled and prepared once per connection, not once per batch size as a `CASE`
per lane would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.states import UNFINISHED_LANE_STATES, RunState, check_lane_move
from bot.domain.verdict import LaneVerdict
from bot.store import records
from bot.store.models import Lane, Run
from bot.store.narrow import rowcount, table_of


def _update(entity: type[Lane]) -> Any:
    """An UPDATE that leaves loaded objects alone: callers read them after the change, as they were."""
    return update(entity).execution_options(synchronize_session=False)


# A lane record's columns in the order of its fields. The engine's reads of every tick (the running lanes,
# the next queued ones) select these and build each record from its row at once: loading an ORM object
# per lane and then copying it attribute by attribute cost a third more than the query itself.
_RECORD_COLUMNS = tuple(table_of(Lane).c[field.name] for field in fields(records.Lane))


def _record(row: Sequence[Any]) -> records.Lane:
    """The lane record of a row that starts with `_RECORD_COLUMNS`."""
    return records.Lane(*row[: len(_RECORD_COLUMNS)])


async def running_lanes_with_run_state(session: AsyncSession) -> list[tuple[records.Lane, RunState]]:
    """Every running lane with its run's state, in one query (the watcher's view each tick)."""
    rows = await session.execute(
        select(*_RECORD_COLUMNS, col(Run.state))
        .join(Run, col(Run.id) == col(Lane.run_id))
        .where(col(Lane.state) == LaneStatus.RUNNING)
        .order_by(col(Lane.id))
    )
    return [(_record(row), row[-1]) for row in rows.all()]


async def running_lanes(session: AsyncSession) -> list[records.Lane]:
    rows = await session.execute(
        select(*_RECORD_COLUMNS).where(col(Lane.state) == LaneStatus.RUNNING).order_by(col(Lane.id))
    )
    return [_record(row) for row in rows.all()]


async def count_running(session: AsyncSession, run_id: int | None = None) -> int:
    """Running lanes of one run, or of every run when `run_id` is None (the global slot pool)."""
    query = select(func.count()).where(col(Lane.state) == LaneStatus.RUNNING)
    if run_id is not None:
        query = query.where(col(Lane.run_id) == run_id)
    return int((await session.execute(query)).scalar_one())


@dataclass(frozen=True)
class RunningCounts:
    total: int
    by_run: dict[int, int]
    by_account: dict[str, int]


async def running_counts(session: AsyncSession) -> RunningCounts:
    """Running lanes in total, per run and per account, in one query (the slot pool's bookkeeping)."""
    rows = await session.execute(
        select(col(Lane.run_id), col(Lane.account), func.count())
        .where(col(Lane.state) == LaneStatus.RUNNING)
        .group_by(col(Lane.run_id), col(Lane.account))
    )
    by_run: dict[int, int] = {}
    by_account: dict[str, int] = {}
    total = 0
    for run_id, account, count in rows.all():
        total += count
        by_run[int(run_id)] = by_run.get(int(run_id), 0) + count
        if account is not None:
            by_account[str(account)] = by_account.get(str(account), 0) + count
    return RunningCounts(total=total, by_run=by_run, by_account=by_account)


async def ready_units(
    session: AsyncSession, run_id: int, now: datetime, max_lanes: int
) -> list[list[records.Lane]]:
    """The next queued lanes of a run, grouped by pair: both lanes of a task start together.

    A lane waiting out a retry backoff is skipped, so it does not hold up the pairs behind it.
    """
    limit = max_lanes + 2  # a unit is at most a pair; rows past a cut pair are dropped below
    rows = await session.execute(
        select(*_RECORD_COLUMNS)
        .where(
            col(Lane.run_id) == run_id,
            col(Lane.state) == LaneStatus.QUEUED,
            or_(col(Lane.not_before).is_(None), col(Lane.not_before) <= now),
        )
        .order_by(col(Lane.pair_index), col(Lane.role))
        .limit(limit)
    )
    lanes = [_record(row) for row in rows.all()]
    units: list[list[records.Lane]] = []
    for lane in lanes:
        if units and units[-1][0].pair_index == lane.pair_index:
            units[-1].append(lane)
        else:
            units.append([lane])
    if len(lanes) == limit and units:
        units.pop()  # the last pair may be cut by the limit
    return units


async def claim_lane(
    session: AsyncSession, lane_id: int, *, now: datetime, account: str, host: str, marker: str
) -> bool:
    """Queued → running before the process starts, so two pumps never start one lane twice."""
    return await claim_lanes(session, [LaneClaim(lane_id, account, marker)], now=now, host=host) == 1


@dataclass(frozen=True)
class LaneClaim:
    lane_id: int
    account: str
    marker: str


async def claim_lanes(session: AsyncSession, claims: Sequence[LaneClaim], *, now: datetime, host: str) -> int:
    """Queued → running for many lanes; returns how many moved (the rest were taken by another).

    A lane another claimer holds locked is skipped rather than waited for (`SKIP LOCKED`): two
    claimers never wait on each other's rows, in whatever order they lock them.
    """
    lanes = table_of(Lane).c
    free = await _lock_in_state(session, [claim.lane_id for claim in claims], LaneStatus.QUEUED, skip=True)
    rows = [
        {"b_id": claim.lane_id, "b_account": claim.account, "b_marker": claim.marker}
        for claim in claims
        if claim.lane_id in free
    ]
    if rows:
        await session.execute(_CLAIM.values(host=host, started_at=now, attempt=lanes.attempt + 1), rows)
    return len(rows)


async def _lock_in_state(
    session: AsyncSession, ids: Sequence[int], state: LaneStatus, *, skip: bool = False
) -> set[int]:
    """Lock those of `ids` that are in `state` (in id order, so two lockers never deadlock); their ids."""
    if not ids:
        return set()
    lanes = table_of(Lane).c
    rows = await session.execute(
        select(lanes.id)
        .where(lanes.id.in_(list(ids)), lanes.state == state)
        .order_by(lanes.id)
        .with_for_update(skip_locked=skip)
    )
    return set(rows.scalars())


def _guarded(state: LaneStatus) -> Any:
    """`UPDATE lanes … WHERE id = :b_id AND state = <state>`, run once per lane (executemany)."""
    lanes = table_of(Lane).c
    return update(table_of(Lane)).where(lanes.id == bindparam("b_id"), lanes.state == state)


def _moving(from_state: LaneStatus, to: LaneStatus) -> Any:
    """The guarded UPDATE of one lane move; a move the table (`bot/domain/states.py`) does not allow is a
    bug, refused here as `runs.move_run` refuses one for runs."""
    check_lane_move(from_state, to)
    return _guarded(from_state).values(state=to)


def _column_param(name: str, column: str) -> Any:
    """A per-lane value, typed as its column (a state's value, a UTC time) like a plain value would be."""
    return bindparam(name, type_=table_of(Lane).c[column].type)


_CLAIM = _moving(LaneStatus.QUEUED, LaneStatus.RUNNING).values(
    finished_at=None,
    account=_column_param("b_account", "account"),
    marker=_column_param("b_marker", "marker"),
    pid=None,
    exit_code=None,
    stop_kind=None,
    stop_sent_at=None,
    killed_at=None,
    stop_wanted=None,
)


async def record_pids(session: AsyncSession, pids: Mapping[int, int]) -> None:
    if pids:
        rows = [{"b_id": lane_id, "b_pid": pid} for lane_id, pid in pids.items()]
        await session.execute(_guarded(LaneStatus.RUNNING).values(pid=bindparam("b_pid")), rows)


@dataclass(frozen=True)
class LaneEnd:
    lane_id: int
    outcome: TrialOutcome
    exit_code: int | None


async def finish_lanes(session: AsyncSession, ends: Sequence[LaneEnd], *, now: datetime) -> set[int]:
    """Running → final for many lanes; returns the ids of the lanes it moved.

    The lanes still running are locked first and only those are written (each row guarded on
    `state = 'running'` all the same), so a caller that read a lane as running when another had
    already settled it learns exactly which of its endings took effect, and counts nothing twice.
    """
    for end in ends:
        check_lane_move(LaneStatus.RUNNING, end.outcome.status)
        if not end.outcome.status.is_final:  # running → queued is a retry (`requeue_lane`), not an end
            raise ValueError(f"a lane never ends {end.outcome.status}")
    moved = await _lock_in_state(session, [end.lane_id for end in ends], LaneStatus.RUNNING)
    rows: list[dict[str, Any]] = [
        {
            "b_id": end.lane_id,
            "b_state": end.outcome.status,
            "b_reward": end.outcome.reward,
            "b_exception_type": end.outcome.exception_type,
            "b_reason": end.outcome.reason,
            "b_reason_kind": end.outcome.reason_kind,
            "b_log_line": end.outcome.log_line,
            "b_exit_code": end.exit_code,
            **{f"b_{name}": value for name, value in verdict_columns(end.outcome.verdict).items()},
        }
        for end in ends
        if end.lane_id in moved
    ]
    if rows:
        await session.execute(_FINISH.values(finished_at=now), rows)
    return {row["b_id"] for row in rows}


def verdict_columns(verdict: LaneVerdict | None) -> dict[str, Any]:
    """The lane columns a verdict fills (all None without one): what is counted, and the whole record."""
    if verdict is None:
        return dict.fromkeys(VERDICT_COLUMNS)
    return {
        "manifest_status": verdict.manifest_status.value,
        "status_tool": verdict.status_tool.value,
        "fingerprint": verdict.fingerprint.id if verdict.fingerprint else None,
        "mcp_calls": verdict.mcp_calls,
        "contaminated": verdict.contaminated,
        "input_tokens": verdict.tokens.input,
        "output_tokens": verdict.tokens.output,
        "cache_write_tokens": verdict.tokens.cache_write,
        "cache_read_tokens": verdict.tokens.cache_read,
        "cost_usd": verdict.cost_usd,
        "verdict_json": verdict.model_dump_json(),
    }


VERDICT_COLUMNS = (
    "manifest_status",
    "status_tool",
    "fingerprint",
    "mcp_calls",
    "contaminated",
    "input_tokens",
    "output_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "cost_usd",
    "verdict_json",
)
# A lane's reason as fields (`bot.domain.reason`); the log's path and the fingerprint have their columns.
REASON_COLUMNS = ("exception_type", "reason", "reason_kind", "log_line")
_FINISH = _guarded(LaneStatus.RUNNING).values(
    {
        name: _column_param(f"b_{name}", name)
        for name in (*REASON_COLUMNS, "state", "reward", "exit_code", *VERDICT_COLUMNS)
    }
)


async def requeue_lane(
    session: AsyncSession,
    lane_id: int,
    *,
    not_before: datetime | None,
    reason: str | None,
    infra: bool,
    verdict: LaneVerdict | None = None,
    log_line: str | None = None,
) -> bool:
    """Running → queued again: an infrastructure failure to retry, or a process lost across a restart.

    The failed attempt's verdicts and its log's telling line are kept until the next attempt ends (a
    pause names their causes)."""
    check_lane_move(LaneStatus.RUNNING, LaneStatus.QUEUED)
    result = await session.execute(
        _update(Lane)
        .where(col(Lane.id) == lane_id, col(Lane.state) == LaneStatus.RUNNING)
        .values(
            state=LaneStatus.QUEUED,
            not_before=not_before,
            reason=reason,
            reason_kind=None,
            log_line=log_line,
            infra_failures=col(Lane.infra_failures) + (1 if infra else 0),
            pid=None,
            marker=None,
            stop_kind=None,
            stop_sent_at=None,
            killed_at=None,
            stop_wanted=None,
            **verdict_columns(verdict),
        )
    )
    return rowcount(result) == 1


async def note_stop(session: AsyncSession, lane_id: int, kind: str, now: datetime) -> bool:
    """Record that SIGINT went to the lane (once): the grace period runs from here."""
    result = await session.execute(
        _update(Lane)
        .where(
            col(Lane.id) == lane_id, col(Lane.state) == LaneStatus.RUNNING, col(Lane.stop_sent_at).is_(None)
        )
        .values(stop_kind=kind, stop_sent_at=now)
    )
    return rowcount(result) == 1


async def note_killed(session: AsyncSession, lane_id: int, now: datetime) -> bool:
    result = await session.execute(
        _update(Lane)
        .where(col(Lane.id) == lane_id, col(Lane.state) == LaneStatus.RUNNING, col(Lane.killed_at).is_(None))
        .values(killed_at=now)
    )
    return rowcount(result) == 1


async def cancel_queued_lanes(session: AsyncSession, run_id: int, now: datetime, reason: str) -> int:
    check_lane_move(LaneStatus.QUEUED, LaneStatus.CANCELLED)
    result = await session.execute(
        _update(Lane)
        .where(col(Lane.run_id) == run_id, col(Lane.state) == LaneStatus.QUEUED)
        .values(state=LaneStatus.CANCELLED, reason=reason, reason_kind=None, log_line=None, finished_at=now)
    )
    return rowcount(result)


async def has_unfinished_lanes(session: AsyncSession, run_id: int) -> bool:
    return await _has_lanes_in(session, run_id, UNFINISHED_LANE_STATES)


async def has_running_lanes(session: AsyncSession, run_id: int) -> bool:
    return await _has_lanes_in(session, run_id, (LaneStatus.RUNNING,))


async def has_queued_lanes(session: AsyncSession, run_id: int) -> bool:
    return await _has_lanes_in(session, run_id, (LaneStatus.QUEUED,))


@dataclass(frozen=True)
class KeptVerdict:
    """The verdict kept on a lane that failed on infrastructure before (None: none was kept)."""

    lane_id: int
    task_id: str
    role: str
    verdict_json: str | None


async def infra_failed_verdicts(session: AsyncSession, run_id: int) -> list[KeptVerdict]:
    """Of a run's lanes that failed on infrastructure at least once, what their last attempt's verdict was;
    only the columns a pause's causes need, for runs of thousands of lanes."""
    rows = await session.execute(
        select(col(Lane.id), col(Lane.task_id), col(Lane.role), col(Lane.verdict_json)).where(
            col(Lane.run_id) == run_id, col(Lane.infra_failures) > 0
        )
    )
    return [KeptVerdict(records.stored_id(row), row.task_id, row.role, row.verdict_json) for row in rows]


async def _has_lanes_in(session: AsyncSession, run_id: int, states: Sequence[LaneStatus]) -> bool:
    rows = await session.execute(
        select(col(Lane.id)).where(col(Lane.run_id) == run_id, col(Lane.state).in_(list(states))).limit(1)
    )
    return rows.first() is not None


@dataclass(frozen=True, order=True)
class StopAsked:
    """A running lane someone asked to stop and retry: which, and of which run."""

    lane_id: int
    run_id: int
    task_id: str
    role: str


async def want_stop(
    session: AsyncSession, kind: str, *, account: str | None = None, lane_id: int | None = None
) -> list[StopAsked]:
    """Ask the engine to stop running lanes (one lane, or every lane on an account) and retry them: the
    watcher signals each on its next look. A lane already stopping, or already asked, is left alone, so
    two clicks stop it once; the rows returned are those this call asked."""
    guard = [
        col(Lane.state) == LaneStatus.RUNNING,
        col(Lane.stop_wanted).is_(None),
        col(Lane.stop_sent_at).is_(None),
    ]
    if account is not None:
        guard.append(col(Lane.account) == account)
    if lane_id is not None:
        guard.append(col(Lane.id) == lane_id)
    result = await session.execute(
        _update(Lane)
        .where(*guard)
        .values(stop_wanted=kind)
        .returning(col(Lane.id), col(Lane.run_id), col(Lane.task_id), col(Lane.role))
    )
    return sorted(StopAsked(int(a), int(b), str(c), str(d)) for a, b, c, d in result.all())


async def note_stall(session: AsyncSession, lane_id: int, attempt: int) -> bool:
    """Mark the attempt's stall as told; False when it already was (told once per attempt, on any replica)."""
    return await _note_once(session, lane_id, attempt, "stall_noted")


async def note_long(session: AsyncSession, lane_id: int, attempt: int) -> bool:
    """Mark the attempt as past its share of the time limit (named on the card); False when it already was."""
    return await _note_once(session, lane_id, attempt, "long_noted")


async def _note_once(session: AsyncSession, lane_id: int, attempt: int, column: str) -> bool:
    """Set `column` to the running attempt unless it holds it already: a guarded UPDATE, so one process
    wins when several notice the same attempt."""
    noted = getattr(Lane, column)
    result = await session.execute(
        _update(Lane)
        .where(
            col(Lane.id) == lane_id,
            col(Lane.state) == LaneStatus.RUNNING,
            col(Lane.attempt) == attempt,
            or_(col(noted).is_(None), col(noted) != attempt),
        )
        .values({column: attempt})
        .returning(col(Lane.id))
    )
    return result.scalar_one_or_none() is not None


async def get_lane(session: AsyncSession, lane_id: int) -> records.Lane | None:
    row = await session.get(Lane, lane_id)
    return records.Lane.from_row(row) if row is not None else None
