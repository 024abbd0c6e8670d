"""Reconciliation after a restart whose write is refused: it is tried again on the next tick, and the lanes
whose process was lost while the bot was down are queued again, never left to become `timeout`.

The refused write is real: a SQLite trigger aborts any update that queues a lane while the test says so.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest
from engine_kit import engine_kit, kill_all
from idle import run_until_idle
from lane_waits import wait_all
from waiting import until

from bot.domain.outcome import LaneStatus
from bot.engine import Engine
from bot.executors import local as local_executor
from bot.executors.base import LaneLaunch
from bot.executors.processes import find_marked
from bot.store.db import Store
from bot.store.models import Lane, RunState

pytestmark = pytest.mark.slow

_FAULT = """
CREATE TABLE write_fault (on_ INTEGER);
CREATE TRIGGER refuse_requeue BEFORE UPDATE OF state ON lanes
WHEN lower(NEW.state) = 'queued' AND (SELECT count(*) FROM write_fault) > 0
BEGIN SELECT RAISE(ABORT, 'disk I/O error (test fault)'); END;
"""


async def _die_together(engine: Engine, store: Store, started: list[Lane]) -> None:
    """Kill the lanes and wait until none of their processes lives: the group leader is reaped first, and
    a member SIGKILLed with it may still be alive for a moment, which the next holder would rightly adopt."""
    await kill_all(engine, store)
    await wait_all(engine.executor)
    markers = {lane.marker for lane in started if lane.marker}
    await until(lambda: not find_marked(markers), "the killed lanes' processes to be gone")


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
        await _die_together(old, kit.store, started)  # the bot and its lanes die together (a reboot)

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

        await run_until_idle(new, kit.store)
        kit.clock.advance(timedelta(seconds=max(lane.timeout_sec for lane in started) + 1))
        await run_until_idle(new, kit.store)
        states = await kit.states(run_id)
        assert "timeout" not in states.values(), states
        assert set(states.values()) <= {"passed", "failed"}, states
        assert (await kit.run(run_id)).state is RunState.FINISHED


_FIX = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")


def _ids(lanes: list[Lane]) -> set[int | None]:
    return {lane.id for lane in lanes}


# A lane's process between fork and exec: alive, but its environment is still its parent's (no marker).
# This one takes the lane's command line and environment from a file and execs them once released.
_HELD_BEFORE_EXEC = """
import json, os, sys, time
release, launch = sys.argv[1], json.loads(open(sys.argv[2]).read())
while not os.path.exists(release):
    time.sleep(0.01)
os.execve(launch["argv"][0], launch["argv"], launch["env"])
"""


def _spawn_held_before_exec(release: Path, launch: LaneLaunch) -> subprocess.Popen[bytes]:
    """Start a lane the way a bot killed mid-spawn leaves it: forked, not yet exec'ed into Harbor."""
    spec = release.parent / f"launch-{launch.lane_id}.json"
    spec.write_text(json.dumps({"argv": list(launch.argv), "env": dict(launch.env)}))
    launch.log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(launch.log_path, "ab") as log_file:
        return subprocess.Popen(
            [sys.executable, "-c", _HELD_BEFORE_EXEC, str(release), str(spec)],
            cwd=launch.cwd,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


async def test_a_lane_forked_but_not_exec_ed_at_the_takeover_is_found_not_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder dies while a lane's process is forked but has not exec'ed Harbor: /proc shows it
    without the lane's marker. The next holder must not take the lane for lost and start it a second
    time; it looks again, finds the process by its marker once it exec'ed, and the lane runs once."""
    release = tmp_path / "exec-now"
    async with engine_kit(tmp_path, lease_ttl_sec=1) as kit:
        monkeypatch.setattr(local_executor, "_spawn", partial(_spawn_held_before_exec, release))
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()  # one pair claimed and forked; the old holder then dies
        started = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(started) == 2
        monkeypatch.undo()

        new = kit.new_engine()
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        await new.tick()  # takes the lease and reconciles while both processes are still pre-exec
        now = {lane.id: lane for lane in await kit.lanes(run_id)}
        assert all(now[lane.id].attempt == 1 for lane in started), now  # not queued and started again

        release.touch()
        markers = {lane.marker or "" for lane in started}
        await until(lambda: find_marked(markers).keys() == markers, "both lanes to exec Harbor")
        await run_until_idle(new, kit.store)
        lanes = await kit.lanes(run_id)
        assert {lane.state for lane in lanes} <= {LaneStatus.PASSED, LaneStatus.FAILED}, lanes
        assert all(lane.attempt == 1 for lane in lanes), lanes
        assert len(kit.trial_dirs()) == len(lanes)


async def test_a_lost_lane_waits_out_the_configured_spawn_grace_before_it_runs_again(tmp_path: Path) -> None:
    """`engine.spawn_grace_sec` is the grace the next holder gives a running lane it cannot find: within
    it the lane is looked for again (it may be forked and not yet exec'ed), past it queued again."""
    async with engine_kit(tmp_path, spawn_grace_sec=60) as kit:
        kit.script({f"{task}/{role}": "hang" for task in _FIX for role in ("baseline", "mcp")})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        old = kit.engine
        await old.tick()  # one pair starts and hangs
        started = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(started) == 2
        await _die_together(old, kit.store, started)

        kit.script({})
        new = kit.new_engine()
        # Past the default grace (10 s) and the lease's ttl, within the configured 60 s: looked for again.
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 10))
        await new.tick()
        now = {lane.id: lane for lane in await kit.lanes(run_id)}
        seen = [(now[lane.id].state, now[lane.id].attempt, now[lane.id].reason) for lane in started]
        assert all(now[lane.id].state is LaneStatus.RUNNING for lane in started), seen
        assert all(now[lane.id].attempt == 1 for lane in started), seen

        kit.clock.advance(timedelta(seconds=30))  # past the grace: queued again and started anew
        await new.tick()
        again = {lane.id: lane for lane in await kit.lanes(run_id)}
        assert all(again[lane.id].attempt == 2 for lane in started), again
        await run_until_idle(new, kit.store)
        assert (await kit.run(run_id)).state is RunState.FINISHED
