"""The lane row, as an executor is handed it: only the fields it reads, in a frozen record."""

from __future__ import annotations

from bot.executors.base import LaneRef
from bot.store.models import Lane


def lane_ref(lane: Lane) -> LaneRef:
    """A lane read from the database has its id; one without is a bug, said here, not as lane 0."""
    if lane.id is None:
        raise ValueError("a lane handed to an executor has no id: it was never stored")
    return LaneRef(
        id=lane.id,
        run_id=lane.run_id,
        attempt=lane.attempt,
        log_path=lane.log_path,
        host=lane.host,
        marker=lane.marker,
        pid=lane.pid,
        started_at=lane.started_at,
    )
