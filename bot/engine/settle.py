"""Settle ended lane attempts in the caller's transaction: retry them, or record their final status.

Infrastructure failures are retried with capped exponential backoff, up to the retry limit, while the
run may still start lanes; task outcomes (`failed`, task errors, timeouts) are final. A run whose
infrastructure failure rate passes the threshold is paused, and says so in its thread.

Decisions are pure (`decide`); `apply` writes a whole batch, the final statuses in one statement.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.verdicts.fingerprints import UNKNOWN as UNKNOWN_FINGERPRINT
from bot.domain.backoff import backoff
from bot.domain.causes import CauseGroup, group_causes, lane_cause
from bot.domain.events import PauseCause, RunPaused
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.states import UNSTOPPED_RUN_STATES, RunState
from bot.domain.verdict import stored_verdict
from bot.engine.attempt_end import RETRY_STOPS, is_rate_limit, stopped_outcome
from bot.settings import EngineConfig
from bot.store import accounts, lanes, outbox, runs
from bot.store.lanes import LaneEnd
from bot.store.records import Lane

_CAUSE_CHARS = 160  # a pause names its cause in one short line

# A run in these states may retry a lane; draining and cancelling runs start nothing new.
RETRYING_STATES = UNSTOPPED_RUN_STATES


@dataclass(frozen=True)
class Ending:
    """What becomes of one ended attempt: its final outcome, or a retry at `retry_at`."""

    lane: Lane
    outcome: TrialOutcome
    exit_code: int | None
    retry_at: datetime | None = None
    retry_reason: str | None = None


def decide(
    lane: Lane,
    run_state: RunState,
    outcome: TrialOutcome,
    *,
    exit_code: int | None,
    now: datetime,
    config: EngineConfig,
) -> Ending:
    outcome = stopped_outcome(lane.stop_kind, outcome, lane.timeout_sec)
    retry = (
        outcome.infra
        and (lane.stop_kind is None or lane.stop_kind in RETRY_STOPS)
        and run_state in RETRYING_STATES
        and lane.infra_failures < config.retry_limit
    )
    if retry:
        failures = lane.infra_failures + 1
        wait = backoff(failures, base=config.retry_backoff_sec, cap=config.retry_backoff_cap_sec)
        reason = f"retry {failures}/{config.retry_limit} after: {outcome.reason}"
        return Ending(lane, outcome, exit_code, retry_at=now + wait, retry_reason=reason)
    if outcome.infra and lane.infra_failures:
        outcome = outcome.model_copy(
            update={"reason": f"{outcome.reason} (after {lane.infra_failures} retries)"}
        )
    return Ending(lane, outcome, exit_code)


async def apply(session: AsyncSession, endings: Sequence[Ending], now: datetime, config: EngineConfig) -> int:
    """Write a batch of endings (each guarded on the lane still running); returns how many moved."""
    finals = [ending for ending in endings if ending.retry_at is None]
    moved = await lanes.finish_lanes(
        session, [LaneEnd(e.lane.id, e.outcome, e.exit_code) for e in finals], now=now
    )
    settled = [ending for ending in finals if ending.lane.id in moved]
    for ending in endings:
        if ending.retry_at is not None and await lanes.requeue_lane(
            session,
            ending.lane.id,
            not_before=ending.retry_at,
            reason=ending.retry_reason,
            infra=True,
            verdict=ending.outcome.verdict,
            log_line=ending.outcome.log_line,
        ):
            settled.append(ending)
    for ending in settled:
        if ending.lane.account and is_rate_limit(ending.outcome):
            rest = timedelta(seconds=config.rate_limit_rest_sec)
            reason = ending.outcome.reason or "rate limit"
            await accounts.rest(session, ending.lane.account, now + rest, reason=reason)
    await _per_run(session, settled, now, config)
    return len(settled)


async def _per_run(session: AsyncSession, settled: list[Ending], now: datetime, config: EngineConfig) -> None:
    """Per run, once per batch: count the attempts, redraw the status, and pause a failing run."""
    for run_id in sorted({ending.lane.run_id for ending in settled}):
        ran = [e for e in settled if e.lane.run_id == run_id and e.outcome.status is not LaneStatus.CANCELLED]
        # A lane someone stopped to retry it elsewhere (drain --stop, Stop and retry) is retried as an
        # infrastructure failure but says nothing of the run's health: it never pauses the run.
        failed = [e for e in ran if e.outcome.infra and e.lane.stop_kind not in RETRY_STOPS]
        infra = len(failed)
        if ran:
            await runs.count_attempts(session, run_id, attempts=len(ran), infra=infra)
        await outbox.redraw_run(session, run_id, now)
        if infra:
            batch = failed
            await pause_if_failing(session, run_id, now, config, batch=batch)


async def pause_if_failing(
    session: AsyncSession, run_id: int, now: datetime, config: EngineConfig, *, batch: Sequence[Ending] = ()
) -> bool:
    """Pause a running run whose infrastructure failure rate passed the threshold; True if it did.

    The pause names the causes of its infrastructure failures (CSB's fingerprints, with the catalog's
    advice), from this batch and the verdicts kept on the lanes that failed before, and the commonest
    reason this batch gave when a failure is one no fingerprint knows ("Docker daemon is not running"),
    so that is what the thread says to fix, not a guess at accounts."""
    counts = await runs.attempt_counts(session, run_id)
    if counts is None:
        return False
    state, attempts, failures = counts.state, counts.attempts, counts.infra_failures
    if state is not RunState.RUNNING or attempts < config.infra_pause_min_attempts:
        return False
    if failures / attempts <= config.infra_pause_rate:
        return False
    if not await lanes.has_queued_lanes(session, run_id):
        # Nothing left to hold back: the run finishes as its last lanes end, and a thread saying
        # "paused, resume it" above a card saying "Finished" would be false.
        return False
    groups = await _infra_causes(session, run_id, batch)
    unknown = not groups or any(group.cause.id == UNKNOWN_FINGERPRINT for group in groups)
    paused = RunPaused(
        run_id=run_id,
        failures=failures,
        attempts=attempts,
        threshold=config.infra_pause_rate,
        causes=tuple(_pause_cause(group) for group in groups),
        # CSB's catalog does not know it (or no verdict names it): the failure's own words name it.
        last=_commonest([e.outcome.reason for e in batch if e.outcome.reason]) if unknown else None,
    )
    if not await runs.move_run(
        session, run_id, from_states=[RunState.RUNNING], to=RunState.PAUSED, paused_reason=paused.reason()
    ):
        return False
    await outbox.tell_run(session, run_id, what="paused", event=paused, now=now)
    return True


def _pause_cause(group: CauseGroup) -> PauseCause:
    fingerprint = group.cause.fingerprint
    if fingerprint is None:
        return PauseCause(id=group.cause.id, lanes=len(group.lanes))
    return PauseCause(
        id=group.cause.id, lanes=len(group.lanes), label=fingerprint.label, advice=fingerprint.advice
    )


async def _infra_causes(session: AsyncSession, run_id: int, batch: Sequence[Ending]) -> list[CauseGroup]:
    """The causes of a run's infrastructure failures: this batch's, and those kept on lanes retried before."""
    items = {e.lane.id: (e.lane.task_id, e.lane.role, e.outcome.verdict) for e in batch}
    for kept in await lanes.infra_failed_verdicts(session, run_id):
        items.setdefault(kept.lane_id, (kept.task_id, kept.role, stored_verdict(kept.verdict_json)))
    return group_causes(
        (f"{task}/{role}", lane_cause(LaneStatus.ERRORED, verdict)) for task, role, verdict in items.values()
    )


def _commonest(causes: Sequence[str]) -> str | None:
    """The reason most failures gave (the first given, on a tie), cut to one short line."""
    if not causes:
        return None
    cause = Counter(causes).most_common(1)[0][0]
    line = " ".join(cause.split())
    return line if len(line) <= _CAUSE_CHARS else line[: _CAUSE_CHARS - 1] + "…"
