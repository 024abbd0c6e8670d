"""The stall watchdog: a running lane whose log and trial folder have not changed for `stall_after_sec`
gets one note in its run's thread (a `LaneStalled` event, once per attempt, on any replica), which
carries Stop and retry; a lane past `long_lane_share` of its time limit is marked so its run's card
names it. Neither stops anything by itself: a quiet agent may be thinking, so a person decides.

Time is the injected clock's; the files' modification times are compared with it. A lane is looked at
again at most every `RECHECK`, and its folder walked only when its log has been quiet long enough.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from bot.csb.progress import last_change, mtime
from bot.domain.events import LaneStalled
from bot.engine.accounts import account_name
from bot.engine.job_index import attempt_job_dir
from bot.settings import EngineConfig
from bot.store import lanes, outbox
from bot.store.db import Store
from bot.store.records import Lane

RECHECK = timedelta(minutes=1)


class StallWatch:
    def __init__(self, store: Store, repo: Path, config: EngineConfig) -> None:
        self._store = store
        self._repo = repo
        self._config = config
        self._next_look: dict[tuple[int, int], datetime] = {}  # (lane, attempt) → not before

    async def look(self, live: list[tuple[Lane, Path]], now: datetime) -> None:
        """`live`: the running lanes nobody is stopping, each with its log file."""
        stall_after = timedelta(seconds=self._config.stall_after_sec)
        quiet = [
            (lane, log)
            for lane, log in live
            if lane.started_at is not None
            and lane.stall_noted != lane.attempt
            and now - lane.started_at >= stall_after
            and self._next_look.get((lane.id, lane.attempt), now) <= now
        ]
        long = [lane for lane, _ in live if lane.long_noted != lane.attempt and self._past_share(lane, now)]
        if not quiet and not long:
            return
        changed = await asyncio.to_thread(self._last_changes, quiet, now - stall_after) if quiet else {}
        async with self._store.write() as session:
            for lane, _ in quiet:
                assert lane.started_at is not None
                last = max(changed.get(lane.id) or lane.started_at, lane.started_at)
                if now - last < stall_after:
                    self._next_look[lane.id, lane.attempt] = now + RECHECK
                    continue
                if await lanes.note_stall(session, lane.id, lane.attempt):
                    event = LaneStalled(
                        run_id=lane.run_id,
                        lane_id=lane.id,
                        task_id=lane.task_id,
                        role=lane.role,
                        attempt=lane.attempt,
                        account=account_name(lane.account) if lane.account else None,
                        quiet_sec=int((now - last).total_seconds()),
                    )
                    what = f"stall-{lane.id}-{lane.attempt}"
                    await outbox.tell_run(session, lane.run_id, what=what, event=event, now=now)
            for lane in long:
                if await lanes.note_long(session, lane.id, lane.attempt):
                    await outbox.redraw_run(session, lane.run_id, now)
        self._forget_ended({(lane.id, lane.attempt) for lane, _ in live})

    def _past_share(self, lane: Lane, now: datetime) -> bool:
        if lane.started_at is None:
            return False
        return now - lane.started_at >= timedelta(seconds=lane.timeout_sec * self._config.long_lane_share)

    def _last_changes(self, quiet: list[tuple[Lane, Path]], since: datetime) -> dict[int, datetime | None]:
        """Each lane's last change; a log written since `since` is enough, so its folder is not walked."""
        found: dict[int, datetime | None] = {}
        for lane, log in quiet:
            written = mtime(log)
            if written is not None and written >= since.timestamp():
                found[lane.id] = datetime.fromtimestamp(written, tz=since.tzinfo)
                continue
            found[lane.id] = last_change(log, attempt_job_dir(self._repo, lane))
        return found

    def _forget_ended(self, live: set[tuple[int, int]]) -> None:
        for key in [key for key in self._next_look if key not in live]:
            del self._next_look[key]
