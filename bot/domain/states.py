"""The states of a request and of a run, the groups the code asks about, and the moves allowed.

Every state change is one guarded UPDATE in the store (`requests.decide`, `runs.move_run`), and those
refuse a move this table does not allow: the table is the state machine, not a description of it.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum


class RequestState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"  # too many infrastructure failures: nothing new starts until resumed
    DRAINING = "draining"  # nothing new starts; running lanes finish
    CANCELLING = "cancelling"  # running lanes are being stopped (SIGINT, grace, SIGKILL)
    FINISHED = "finished"
    CANCELLED = "cancelled"  # drained or cancelled, and nothing runs any more

    @property
    def is_final(self) -> bool:
        return self in FINAL_RUN_STATES


# A request is decided once: approved (and its run queued), rejected, or expired unanswered.
REQUEST_TRANSITIONS: dict[RequestState, frozenset[RequestState]] = {
    RequestState.PENDING: frozenset({RequestState.APPROVED, RequestState.REJECTED, RequestState.EXPIRED}),
    RequestState.APPROVED: frozenset(),
    RequestState.REJECTED: frozenset(),
    RequestState.EXPIRED: frozenset(),
}

# Runs that still have work or lanes running.
ACTIVE_RUN_STATES = (
    RunState.QUEUED,
    RunState.RUNNING,
    RunState.PAUSED,
    RunState.DRAINING,
    RunState.CANCELLING,
)
# Runs that may start new lanes.
STARTABLE_RUN_STATES = (RunState.QUEUED, RunState.RUNNING)
# Runs started and not being stopped: they close as finished once no lane is queued or running.
UNDER_WAY_RUN_STATES = (RunState.RUNNING, RunState.PAUSED)
# Runs neither ended nor being stopped: a drain may stop them, and a lane failed on infrastructure is retried.
UNSTOPPED_RUN_STATES = (RunState.QUEUED, RunState.RUNNING, RunState.PAUSED)
# Runs a cancel may stop (a drain under way may still be cut short): the card shows `Cancel`.
CANCELLABLE_RUN_STATES = (*UNSTOPPED_RUN_STATES, RunState.DRAINING)
# Runs being stopped: they close as cancelled once no lane is running.
STOPPING_RUN_STATES = (RunState.DRAINING, RunState.CANCELLING)
# Runs whose next lanes will start, so an ETA can be given.
RUN_STATES_WITH_ETA = (RunState.QUEUED, RunState.RUNNING, RunState.DRAINING)
FINAL_RUN_STATES = (RunState.FINISHED, RunState.CANCELLED)

RUN_TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    # started; voided before it started (its checkout changed); drained or cancelled
    RunState.QUEUED: frozenset(
        {RunState.RUNNING, RunState.CANCELLED, RunState.DRAINING, RunState.CANCELLING}
    ),
    # paused by infrastructure failures; drained or cancelled; every lane ended
    RunState.RUNNING: frozenset({RunState.PAUSED, RunState.DRAINING, RunState.CANCELLING, RunState.FINISHED}),
    # resumed; drained or cancelled; every lane ended
    RunState.PAUSED: frozenset({RunState.RUNNING, RunState.DRAINING, RunState.CANCELLING, RunState.FINISHED}),
    # a drain cut short by a cancel; no lane running any more
    RunState.DRAINING: frozenset({RunState.CANCELLING, RunState.CANCELLED}),
    RunState.CANCELLING: frozenset({RunState.CANCELLED}),
    RunState.FINISHED: frozenset(),
    RunState.CANCELLED: frozenset(),
}


def check_run_move(from_states: Collection[RunState], to: RunState) -> None:
    """Raise ValueError for a guarded move that names a move the table does not allow."""
    wrong = [state for state in from_states if to not in RUN_TRANSITIONS[state]]
    if wrong:
        raise ValueError(f"a run never moves from {', '.join(wrong)} to {to}")


def check_request_move(from_state: RequestState, to: RequestState) -> None:
    if to not in REQUEST_TRANSITIONS[from_state]:
        raise ValueError(f"a request never moves from {from_state} to {to}")
