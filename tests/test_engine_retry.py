"""Failure handling with the scripted Harbor stand-in: infrastructure failures are retried with backoff
(on another account, the rate-limited one rested), task outcomes never are; a run with too many
infrastructure failures pauses; a lane past its time limit is stopped and marked `timeout`.
"""

from __future__ import annotations

import os
import re
import signal
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from engine_kit import engine_kit, make_accounts
from idle import run_until_idle
from lane_waits import wait_all, wait_any

from bot.csb.child_env import child_environ
from bot.domain.outcome import LaneStatus
from bot.engine.attempts import RETRIED_DIR
from bot.executors.base import LaneLaunch
from bot.executors.local import LocalExecutor
from bot.slack.views.events import stored_text
from bot.store import accounts, outbox
from bot.store.models import OutboxKind, RunState

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"


async def test_only_infrastructure_failures_are_retried(tmp_path: Path, db_url: str) -> None:
    make_accounts(tmp_path, "account1", "account2")
    async with engine_kit(tmp_path, url=db_url, retry_limit=2, sessions_per_account=3) as kit:
        kit.script({f"{SLUG}/mcp": "ratelimit", f"{PAGE}/baseline": "crash", f"{MERGE}/mcp": "error"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        lanes = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}
        assert lanes[SLUG, "mcp"].state is LaneStatus.QUEUED  # waiting out its backoff
        assert lanes[PAGE, "baseline"].state is LaneStatus.QUEUED
        assert lanes[MERGE, "mcp"].state is LaneStatus.ERRORED  # a task error: final
        assert lanes[MERGE, "baseline"].state is LaneStatus.FAILED  # a real outcome: final
        assert lanes[SLUG, "mcp"].infra_failures == 1 and "429" in (lanes[SLUG, "mcp"].reason or "")
        limited = lanes[SLUG, "mcp"].account
        async with kit.store.read() as session:
            rested = {a.home: a.rested_until for a in await accounts.all_accounts(session)}
        assert rested[limited] == kit.clock.now() + timedelta(seconds=kit.config.rate_limit_rest_sec)

        kit.script({})  # the infrastructure recovers
        kit.clock.advance(timedelta(seconds=9))
        await run_until_idle(kit.engine, kit.store)
        states = await kit.states(run_id)
        assert states[SLUG, "mcp"] == "queued"  # backoff (10 s) not over yet

        kit.clock.advance(timedelta(seconds=1))
        await run_until_idle(kit.engine, kit.store)
        lanes = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}
        assert lanes[SLUG, "mcp"].state is LaneStatus.PASSED and lanes[SLUG, "mcp"].attempt == 2
        assert lanes[SLUG, "mcp"].account != limited  # the rested account is not used
        assert lanes[PAGE, "baseline"].state is LaneStatus.FAILED and lanes[PAGE, "baseline"].attempt == 2
        assert lanes[MERGE, "mcp"].attempt == 1 and lanes[MERGE, "baseline"].attempt == 1
        assert (await kit.run(run_id)).state is RunState.FINISHED
        # the failed attempts' files were moved aside, so the retry's result is the one read
        retried = sorted(p.name for p in (kit.repo / "runs").rglob(f"{RETRIED_DIR}/*"))
        assert retried == [f"{PAGE}.baseline-local-direct.attempt1", f"{SLUG}.mcp-remote-direct.attempt1"]
        assert len(kit.trial_dirs()) == 6 + 2


async def test_retries_give_up_after_the_limit(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, retry_limit=1, infra_pause_min_attempts=100) as kit:
        kit.script({f"{SLUG}/baseline": "crash"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        kit.clock.advance(timedelta(seconds=10))
        await run_until_idle(kit.engine, kit.store)
        lanes = {(lane.task_id, lane.role): lane for lane in await kit.lanes(run_id)}
        crashed = lanes[SLUG, "baseline"]
        assert crashed.state is LaneStatus.ERRORED and crashed.attempt == 2
        assert "after 1 retries" in (crashed.reason or "")
        assert (await kit.run(run_id)).state is RunState.FINISHED


async def test_a_run_with_too_many_infrastructure_failures_pauses(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url, infra_pause_min_attempts=4, infra_pause_rate=0.5) as kit:
        kit.script({SLUG: "crash", PAGE: "crash", MERGE: "crash"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        run = await kit.run(run_id)
        assert run.state is RunState.PAUSED
        pattern = r"([4-6]) of \1 lane attempts failed on infrastructure: no_trial_result ×\1"
        assert re.fullmatch(pattern, run.paused_reason or "")
        async with kit.store.read() as session:
            notices = [i for i in await outbox.due(session, kit.clock.now()) if i.kind is OutboxKind.NOTICE]
        assert len(notices) == 1 and "paused" in stored_text(notices[0].text or "")
        # Lanes that exited in one tick paused the run there; a third pair may not have started yet.
        attempts = {lane.id: lane.attempt for lane in await kit.lanes(run_id)}
        assert set(attempts.values()) <= {0, 1}
        kit.clock.advance(timedelta(minutes=5))
        await run_until_idle(kit.engine, kit.store)
        assert {lane.id: lane.attempt for lane in await kit.lanes(run_id)} == attempts  # nothing new started


async def test_a_lane_past_its_time_limit_is_stopped_and_marked_timeout(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(tmp_path, url=db_url) as kit:
        kit.script({f"{SLUG}/mcp": "hang"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        while (await kit.states(run_id))[SLUG, "baseline"] == "running":
            await wait_any(kit.engine.executor)  # the baseline lane ends; the hanging MCP lane runs on
            await kit.engine.tick()
        hanging = next(
            lane for lane in await kit.lanes(run_id) if lane.role == "mcp" and lane.pair_index == 0
        )
        # Harbor's budget × 10 + teardown: build 120 s and verifier 600 s (default) twice, setup 360 s,
        # agent 600 s (default): never before Harbor itself would give up.
        assert hanging.state is LaneStatus.RUNNING
        assert hanging.timeout_sec == (2 * 120 + 360 + 600 + 2 * 600) * 10 + 300
        kit.clock.advance(timedelta(seconds=hanging.timeout_sec + 1))
        await run_until_idle(kit.engine, kit.store)
        states = await kit.states(run_id)
        assert states[SLUG, "mcp"] == "timeout"
        assert states[SLUG, "baseline"] == "passed"
        assert (await kit.run(run_id)).state is RunState.FINISHED
        lane = next(lane for lane in await kit.lanes(run_id) if lane.id == hanging.id)
        assert lane.stop_kind == "timeout" and lane.exit_code == 130 and lane.attempt == 1


def _ignore_sigint_harbor(tmp_path: Path) -> Path:
    harbor = tmp_path / "stubborn-harbor"
    harbor.write_text("#!/bin/sh\ntrap '' INT\nexec sleep 600\n")
    harbor.chmod(0o755)
    return harbor


async def test_sigkill_after_the_grace_period(tmp_path: Path, db_url: str) -> None:
    async with engine_kit(
        tmp_path, url=db_url, harbor=_ignore_sigint_harbor(tmp_path), cancel_grace_sec=30
    ) as kit:
        run_id = await kit.approve("csb_org_onboarding", parallel=2)
        await kit.engine.tick()
        kit.clock.advance(timedelta(seconds=(2 * 120 + 360 + 600 + 2 * 600) * 10 + 300 + 1))
        await kit.engine.tick()  # SIGINT: ignored
        kit.clock.advance(timedelta(seconds=29))
        await kit.engine.tick()
        assert all(
            lane.state is LaneStatus.RUNNING and lane.killed_at is None for lane in await kit.lanes(run_id)
        )
        kit.clock.advance(timedelta(seconds=1))
        await kit.engine.tick()  # SIGKILL
        await run_until_idle(kit.engine, kit.store)
        lanes = await kit.lanes(run_id)
        assert [lane.state for lane in lanes] == [LaneStatus.TIMEOUT, LaneStatus.TIMEOUT]
        assert all(lane.killed_at is not None and lane.exit_code == -9 for lane in lanes)


async def test_lanes_take_sigint_even_when_the_bot_was_started_ignoring_it(tmp_path: Path) -> None:
    """Under nohup or as a background job the bot inherits SIGINT ignored; its lanes must not."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        executor = LocalExecutor(tmp_path, "this-host")
        probe = "import signal; print(signal.getsignal(signal.SIGINT))"
        log = tmp_path / "probe.log"
        await executor.start(
            [LaneLaunch(1, [sys.executable, "-c", probe], tmp_path, child_environ(os.environ), log)]
        )
        await wait_all(executor)
        assert "default_int_handler" in log.read_text()
    finally:
        signal.signal(signal.SIGINT, previous)


async def test_a_lane_stopped_while_starting_still_gets_its_sigint(tmp_path: Path, db_url: str) -> None:
    """CPython can lose a SIGINT that lands while its interpreter starts, so the executor holds a stop
    for a lane that young until it is `SIGINT_NOT_BEFORE` old: no lane runs on to SIGKILL for that."""
    async with engine_kit(tmp_path, url=db_url) as kit:
        kit.script({SLUG: "hang"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=2)
        await kit.engine.tick()
        executor = kit.engine.executor
        started = [lane for lane in await kit.lanes(run_id) if lane.state is LaneStatus.RUNNING]
        assert len(started) == 2
        for lane in started:
            await executor.interrupt(lane)
        seen = await executor.observe(started)
        assert [look.running for look in seen.values()] == [True, True]  # held, not yet sent
        while any(look.running for look in seen.values()):
            await wait_any(executor)
            seen = await executor.observe(started)
        assert [look.exit_code for look in seen.values()] == [130, 130]
        logs = [path.read_text() for path in (kit.repo / "runs").rglob(f"{SLUG}.log")]
        assert len(logs) == 2 and all("interrupted by SIGINT" in log for log in logs)


async def test_a_run_with_nothing_left_to_hold_back_finishes_instead_of_pausing(
    tmp_path: Path, db_url: str
) -> None:
    """With `retry_limit = 0` every failure is final: pausing would hold nothing back, and the thread
    would say "paused, resume it" above a card that says Finished."""
    # Slots for all six lanes, so none is ever queued: the run has nothing to hold back however the
    # crashes fall into ticks (with four slots, four crashes settled in one tick pause the two queued).
    async with engine_kit(
        tmp_path, url=db_url, retry_limit=0, infra_pause_min_attempts=4, infra_pause_rate=0.5, global_slots=6
    ) as kit:
        kit.script({SLUG: "crash", PAGE: "crash", MERGE: "crash"})
        run_id = await kit.approve("csb_sdlc_fix", parallel=6)
        await run_until_idle(kit.engine, kit.store)
        assert (await kit.run(run_id)).state is RunState.FINISHED
        assert {lane.state for lane in await kit.lanes(run_id)} == {LaneStatus.ERRORED}
        async with kit.store.read() as session:
            notices = [i for i in await outbox.due(session, kit.clock.now()) if i.kind is OutboxKind.NOTICE]
        assert not [n for n in notices if "paused" in stored_text(n.text or "")]
