"""The lane row, as an executor is handed it: only the fields it reads, in a frozen record."""

from __future__ import annotations

from bot.executors.base import LaneRef
from bot.store.records import Lane


def lane_ref(lane: Lane) -> LaneRef:
    """The executor's view of a lane: only what it reads, so it never holds the store's record."""
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
