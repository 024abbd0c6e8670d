"""Reconciliation after a restart whose write is refused: it is tried again on the next tick, and the lanes
whose process was lost while the bot was down are queued again, never left to become `timeout`.

The refused write is real: a SQLite trigger aborts any update that queues a lane while the test says so.
"""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import engine_kit, kill_all, run_until_idle

from bot.domain.outcome import LaneStatus
from bot.store.models import Lane, RunState

pytestmark = pytest.mark.slow

_FAULT = """
CREATE TABLE write_fault (on_ INTEGER);
CREATE TRIGGER refuse_requeue BEFORE UPDATE OF state ON lanes
WHEN lower(NEW.state) = 'queued' AND (SELECT count(*) FROM write_fault) > 0
BEGIN SELECT RAISE(ABORT, 'disk I/O error (test fault)'); END;
"""


def _sql(db: Path, script: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.executescript(script)


async def test_a_refused_reconciliation_is_retried_and_lost_lanes_run_again(tmp_path: Path) -> None:
    db = tmp_path / "bot.db"
    async with engine_kit(tmp_path) as kit:
        kit.script({f"{task}/{role}": "hang" for task in _FIX for role in ("baseline", "mcp")})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        old = kit.engine
        await old.tick()  # one pair starts and hangs
        started = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(started) == 2
        await kill_all(old, kit.store)  # the bot and its lanes die together (a reboot)
        await old.executor.wait_all()

        _sql(db, _FAULT + "INSERT INTO write_fault VALUES (1);")
        kit.script({})
        new = kit.new_engine()
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        with contextlib.suppress(Exception):  # the write is refused: this tick may end with that error
            await new.tick()
        assert {lane.state for lane in await kit.lanes(run_id) if lane.id in _ids(started)} == {
            LaneStatus.RUNNING
        }

        _sql(db, "DELETE FROM write_fault;")  # the disk is back
        await new.tick()
        again = {lane.id: lane for lane in await kit.lanes(run_id)}
        for lane in started:
            assert again[lane.id].attempt == 2, again[lane.id]  # queued again and started anew
            assert again[lane.id].infra_failures == 0  # a lost process is not the lane's failure

        await run_until_idle(new)
        kit.clock.advance(timedelta(seconds=max(lane.timeout_sec for lane in started) + 1))
        await run_until_idle(new)
        states = await kit.states(run_id)
        assert "timeout" not in states.values(), states
        assert set(states.values()) <= {"passed", "failed"}, states
        assert (await kit.run(run_id)).state is RunState.FINISHED


_FIX = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")


def _ids(lanes: list[Lane]) -> set[int | None]:
    return {lane.id for lane in lanes}
