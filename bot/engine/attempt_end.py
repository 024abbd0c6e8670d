"""What happens to a lane attempt that ended: retried, finished, or recorded as stopped."""

from __future__ import annotations

import re
from datetime import timedelta

from bot.csb.verdicts.fingerprints import API_RATE_LIMIT
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.stops import RETRY_STOPS as RETRY_STOPS
from bot.domain.stops import STOP_CANCEL as STOP_CANCEL
from bot.domain.stops import STOP_DRAIN, STOP_STALL
from bot.domain.stops import STOP_TIMEOUT as STOP_TIMEOUT

_RETRY_REASONS = {
    STOP_DRAIN: "stopped to be retried: its account was drained",
    STOP_STALL: "stopped to be retried: it had stalled (Stop and retry)",
}

_RATE_LIMIT = re.compile(r"rate[ _-]?limit|(?<![\d.])429(?!\d)|overloaded", re.I)


def is_rate_limit(outcome: TrialOutcome) -> bool:
    """An infrastructure failure caused by the account's API limits: the account should rest."""
    fingerprint = outcome.verdict.fingerprint if outcome.verdict else None
    if fingerprint is not None and fingerprint.id == API_RATE_LIMIT:
        return outcome.infra
    said = (outcome.reason, outcome.log_line)  # the message or the log's telling line may name it
    return outcome.infra and any(_RATE_LIMIT.search(text) for text in said if text)


def stopped_outcome(stop_kind: str | None, outcome: TrialOutcome, timeout_sec: int) -> TrialOutcome:
    """A lane the engine stopped ends `timeout` or `cancelled`, whatever Harbor wrote; one stopped to be
    retried (drain --stop, Stop and retry) an infrastructure failure.

    Harbor answers SIGINT with a trial result of its own (`CancelledError`), which would otherwise read
    as an errored task and drop the pair from the statistics.
    """
    if stop_kind is None:
        return outcome
    if stop_kind in RETRY_STOPS:
        return TrialOutcome(status=LaneStatus.ERRORED, reason=_RETRY_REASONS[stop_kind], infra=True)
    if stop_kind == STOP_TIMEOUT:
        limit = timedelta(seconds=timeout_sec)
        return TrialOutcome(status=LaneStatus.TIMEOUT, reason=f"stopped: no result within {limit}")
    return TrialOutcome(status=LaneStatus.CANCELLED, reason="stopped: the run was cancelled")
