"""The states of a request, a run and a lane, the groups the code asks about, and the moves allowed.

Every state change is one guarded UPDATE in the store (`requests.decide`, `runs.move_run`, the lane moves
in `lanes.py`), and those refuse a move these tables do not allow: the tables are the state machine, not a
description of it. A group of states is written here once and named for the question it answers.
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


class LaneStatus(StrEnum):
    """A lane's state: waiting, running, then one of CSB's results, or cancelled (never ran to an end)."""

    QUEUED = "queued"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"

    @property
    def is_final(self) -> bool:
        return self not in UNFINISHED_LANE_STATES


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


# Lanes still to run or running: a run with one of these has not ended.
UNFINISHED_LANE_STATES = (LaneStatus.QUEUED, LaneStatus.RUNNING)
# Lanes with a reward CSB scores: a pass or a genuine fail.
SCORED_LANE_STATES = (LaneStatus.PASSED, LaneStatus.FAILED)
# Lanes that ended without a reward: the card and the report say why instead.
UNSCORED_LANE_STATES = (LaneStatus.ERRORED, LaneStatus.TIMEOUT)
# Lanes that ran to an end (cancelled ones did not): they count towards progress and durations.
COMPLETED_LANE_STATES = (*SCORED_LANE_STATES, *UNSCORED_LANE_STATES)
# Lanes a rerun runs again: everything that ran to an end but did not pass.
RERUNNABLE_LANE_STATES = (LaneStatus.FAILED, *UNSCORED_LANE_STATES)
# Lanes of a paused run that neither ran to an end nor run: its card counts their tasks as not run.
WAITING_LANE_STATES = (LaneStatus.QUEUED, LaneStatus.CANCELLED)
# What a rerun's card says the earlier lanes of its tasks ended as: failed and errored always named,
# timeouts and lanes that never ran to an end (a run cancelled or drained part way) only when some did.
RERUN_NOTE_LANE_STATES = (*RERUNNABLE_LANE_STATES, LaneStatus.CANCELLED)
RERUN_NOTE_ALWAYS_NAMED = frozenset({LaneStatus.FAILED, LaneStatus.ERRORED})

LANE_TRANSITIONS: dict[LaneStatus, frozenset[LaneStatus]] = {
    # claimed and started; cancelled before it started
    LaneStatus.QUEUED: frozenset({LaneStatus.RUNNING, LaneStatus.CANCELLED}),
    # ended with CSB's result or stopped by a cancel; queued again to retry an infrastructure failure
    LaneStatus.RUNNING: frozenset({LaneStatus.QUEUED, *COMPLETED_LANE_STATES, LaneStatus.CANCELLED}),
    **{state: frozenset() for state in (*COMPLETED_LANE_STATES, LaneStatus.CANCELLED)},
}


def check_lane_move(from_state: LaneStatus, to: LaneStatus) -> None:
    """Raise ValueError for a guarded lane move the table does not allow."""
    if to not in LANE_TRANSITIONS[from_state]:
        raise ValueError(f"a lane never moves from {from_state} to {to}")


def check_run_move(from_states: Collection[RunState], to: RunState) -> None:
    """Raise ValueError for a guarded move that names a move the table does not allow."""
    wrong = [state for state in from_states if to not in RUN_TRANSITIONS[state]]
    if wrong:
        raise ValueError(f"a run never moves from {', '.join(wrong)} to {to}")


def check_request_move(from_state: RequestState, to: RequestState) -> None:
    if to not in REQUEST_TRANSITIONS[from_state]:
        raise ValueError(f"a request never moves from {from_state} to {to}")
