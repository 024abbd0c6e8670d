"""A promotion never half done: a real bot process SIGKILLed at each step of a promotion, restarted, and
the tree it finds settled (undone before the move, finished after it) with the card and thread saying
which; two bot processes sharing PostgreSQL running two promotions, one at a time; and a bot that loses
the timer lease mid-promotion stopping before the new holder settles it."""

from __future__ import annotations

import asyncio
import json
import signal
from datetime import UTC, datetime
from pathlib import Path

import pytest
from bot_process import CONFIG, BotProcess, World, request_and_approve, world
from harness import CHANNEL, SECRET
from sqlalchemy import text
from test_e2e_run import card_text
from waiting import until

from bot.csb.promotion.manifest_diff import official_folders
from bot.csb.promotion.manifest_file import read_manifest
from bot.csb.promotion.manifest_scan import build_manifest, scan
from bot.domain.promotion_flow import Phase, PromotionState, Step
from bot.engine.promotion_runner import HOLD_ENV
from bot.playground import ADMIN, APPROVER, REQUESTER, SlackDriver
from bot.store import audit as audit_trail
from bot.store import promotions
from bot.store.records import Promotion

pytestmark = pytest.mark.slow  # real child processes

POLICY = f"""
[policy.official.approvers]
users = ["{APPROVER}", "{ADMIN}"]
"""
ENDED = {PromotionState.PROMOTED, PromotionState.UNDONE, PromotionState.LOST}
# The bots are stopped during promotions, never while lanes run: the lanes need not work a while.
NO_DELAY = {"HARBOR_STANDIN_DELAY": "0"}


async def finished_run(w: World, bot: BotProcess) -> Path:
    await request_and_approve(w, bot, "run csb_sdlc_fix --parallel 4")
    await until(w.finished, "the run to finish")
    (folder,) = (w.repo / "runs" / "staging").iterdir()
    return folder


async def promote(w: World, bot: BotProcess, run_id: int) -> None:
    """`/csb promote <run>` by one approver, Approve by the other, through the bot's HTTP path."""
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        await driver.slash_command(APPROVER, f"promote {run_id}")

        def card() -> dict[str, object] | None:
            found = [
                m
                for m in w.standin.messages(CHANNEL)
                if "Promotion #" in card_text(m)
                and f"of run #{run_id}" in card_text(m)
                and "Approve" in str(m.get("blocks"))
            ]
            return found[-1] if found else None

        await until(card, f"run #{run_id}'s promotion card with Approve")
        message = card()
        assert message is not None
        assert (await driver.click_button(ADMIN, CHANNEL, str(message["ts"]), "Approve")).status == 200


async def promotions_of(w: World, run_id: int) -> list[Promotion]:
    async with w.store.read() as session:
        return await promotions.of_run(session, run_id)


def held(w: World, index: int) -> bool:
    return "promotion held at" in (w.tmp / f"bot-{index}.log").read_text(errors="replace")


@pytest.mark.parametrize(
    "hold",
    [
        "extract_task_metrics:after",
        "triage:after",
        "move:before",
        "move:after",
        "manifest:after",
        "compare:before",
    ],
)
async def test_a_bot_killed_at_a_step_leaves_the_tree_consistent(tmp_path: Path, hold: str) -> None:
    async with world(tmp_path, f"sqlite:///{tmp_path / 'bot.db'}", CONFIG + POLICY) as w:
        w.env.update(NO_DELAY)
        w.env[HOLD_ENV] = hold
        first = await w.start_bot()
        folder = await finished_run(w, first)
        manifest = w.repo / "runs" / "official" / "MANIFEST.json"
        await promote(w, first, 1)
        await until(lambda: held(w, 0), f"the promotion to stop at {hold}")
        (row,) = await promotions_of(w, 1)
        assert row.state is PromotionState.EXECUTING and row.step == hold.split(":")[0]
        first.kill()

        del w.env[HOLD_ENV]
        await w.start_bot()

        async def ended() -> Promotion | None:
            (row,) = await promotions_of(w, 1)
            return row if row.state in ENDED else None

        await until(ended, "the restarted bot to settle the promotion")
        (row,) = await promotions_of(w, 1)
        promoted = w.repo / "runs" / "official" / folder.name
        moved = hold in ("move:after", "manifest:after", "compare:before")
        assert row.state is (PromotionState.PROMOTED if moved else PromotionState.UNDONE)
        assert row.after_restart and row.error == f"the bot stopped during step {hold.split(':')[0]}"
        if moved:  # finished: in official only, with its triage.json, and the MANIFEST over the folders
            assert not folder.exists() and promoted.is_dir()
            # ... and the official results exported again over the MANIFEST the settling wrote
            export = next(e for e in promotions.entries(row) if e.step is Step.EXPORT)
            assert export.phase is Phase.DONE and export.note.startswith("after settling: ")
            assert (w.repo / "docs" / "official_results" / "data" / "official_results.json").is_file()
            assert json.loads((promoted / "triage.json").read_text())["decision"] == "include"
            written = read_manifest(manifest)
            assert written is not None
            runs = {
                r.run_dir for tasks in written.run_history.values() for t in tasks.values() for r in t.runs
            }
            assert runs == {folder.name}
        else:  # undone: in staging only, as it was, and no MANIFEST written
            assert folder.is_dir() and not promoted.exists()
            assert not (folder / "triage.json").exists() and not manifest.exists()
        outcome = "is official" if moved else "was undone"

        def told() -> bool:
            return any(
                outcome in card_text(m) and "after a restart" in card_text(m)
                for m in w.standin.messages(CHANNEL)
                + [r for m in w.standin.messages(CHANNEL) for r in w.standin.thread(CHANNEL, str(m["ts"]))]
            )

        await until(told, "the thread to say how the promotion was settled")


async def run_to_its_end(w: World, bot: BotProcess, suite: str) -> Path:
    """`/csb run <suite>` approved and run to its end on `bot`; its staging folder."""
    before = {str(m["ts"]) for m in w.standin.messages(CHANNEL)}
    runs = len(await w.run_states()) + 1
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        await driver.slash_command(REQUESTER, f"run {suite} --parallel 4")

        def card() -> dict[str, object] | None:
            new = [m for m in w.standin.messages(CHANNEL) if str(m["ts"]) not in before]
            return next((m for m in new if "Approve" in str(m.get("blocks"))), None)

        await until(card, f"the approval card of {suite}")
        message = card()
        assert message is not None
        await driver.click_button(APPROVER, CHANNEL, str(message["ts"]), "Approve")
    await until(lambda: _ended(w, runs), f"the run of {suite} to finish")
    (folder,) = [p for p in (w.repo / "runs" / "staging").iterdir() if p.name.startswith(suite)]
    return folder


async def _ended(w: World, runs: int) -> bool:
    states = await w.run_states()
    return len(states) == runs and all(state == "finished" for state in states)


async def ask_promotion(w: World, bot: BotProcess, run_id: int) -> str:
    """`/csb promote <run>` through `bot`; the ts of its card once Approve is on it."""
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        await driver.slash_command(APPROVER, f"promote {run_id}")

    def card() -> str | None:
        return next(
            (
                str(m["ts"])
                for m in w.standin.messages(CHANNEL)
                if f"of run #{run_id}" in card_text(m) and "Approve" in str(m.get("blocks"))
            ),
            None,
        )

    await until(card, f"run #{run_id}'s promotion card with Approve")
    ts = card()
    assert ts is not None
    return ts


async def approve_through(w: World, bot: BotProcess, card_ts: str) -> int:
    async with SlackDriver(f"{bot.url}/slack/events", SECRET, w.standin, w.slack_url) as driver:
        return (await driver.click_button(ADMIN, CHANNEL, card_ts, "Approve")).status


def span(row: Promotion) -> tuple[datetime, datetime]:
    """From the start of its first step to the end of its last, as its journal says."""
    entries = promotions.entries(row)
    assert entries and all(e.started_at is not None and e.ended_at is not None for e in entries)
    return min(e.started_at for e in entries if e.started_at), max(e.ended_at for e in entries if e.ended_at)


async def test_two_promotions_approved_at_once_on_two_processes_run_one_at_a_time(
    tmp_path: Path, postgres: object
) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database()  # type: ignore[attr-defined]
    async with world(tmp_path, url, CONFIG + POLICY) as w:
        w.env.update(NO_DELAY)
        one, two = await asyncio.gather(w.start_bot(), w.start_bot())
        fix = await run_to_its_end(w, one, "csb_sdlc_fix")
        debug = await run_to_its_end(w, two, "csb_sdlc_debug")
        cards = [await ask_promotion(w, one, 1), await ask_promotion(w, two, 2)]
        # Both approved at once, each through another process.
        assert await asyncio.gather(approve_through(w, one, cards[0]), approve_through(w, two, cards[1])) == [
            200,
            200,
        ]

        async def both_ended() -> list[Promotion] | None:
            rows = [row for run in (1, 2) for row in await promotions_of(w, run)]
            return rows if all(row.state in ENDED for row in rows) else None

        await until(both_ended, "both promotions to end")
        first, second = sorted(
            [row for run in (1, 2) for row in await promotions_of(w, run)], key=lambda r: span(r)[0]
        )
        assert first.state is second.state is PromotionState.PROMOTED, (first.error, second.error)
        assert span(first)[1] <= span(second)[0], "the two promotions' steps overlapped"

        official = w.repo / "runs" / "official"
        assert not fix.exists() and not debug.exists()
        assert (official / fix.name).is_dir() and (official / debug.name).is_dir()
        written = read_manifest(official / "MANIFEST.json")
        assert written is not None
        # The MANIFEST is the one the folders make now (both runs), as generate_manifest.py would write it.
        again = build_manifest(scan(official_folders(official)), datetime.now(UTC))
        assert written.model_dump(exclude={"generated"}) == again.model_dump(exclude={"generated"})
        assert {key.split("/")[0] for key in written.runs} == {"csb_sdlc_fix", "csb_sdlc_debug"}
        for row in (first, second):
            assert promotions.entries(row)[-1].note == "as the diff shown"


# A short ttl, so that a bot stalled for a few seconds loses the lease to the other.
SHORT_LEASE = CONFIG.replace("lease_ttl_sec = 30", "lease_ttl_sec = 8") + POLICY


@pytest.mark.parametrize(
    ("hold", "outcome"),
    [("move:before", PromotionState.UNDONE), ("manifest:before", PromotionState.PROMOTED)],
)
async def test_a_bot_that_loses_the_lease_mid_promotion_stops_before_the_holder_settles_it(
    tmp_path: Path, postgres: object, hold: str, outcome: PromotionState
) -> None:
    if postgres is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    url = postgres.new_database()  # type: ignore[attr-defined]
    async with world(tmp_path, url, SHORT_LEASE) as w:
        w.env.update(NO_DELAY)
        w.env[HOLD_ENV] = hold
        first = await w.start_bot()
        await until(lambda: _holder_is(w, first), "the first bot to take the lease")
        del w.env[HOLD_ENV]
        second = await w.start_bot()
        folder = await run_to_its_end(w, first, "csb_sdlc_fix")
        await promote(w, first, 1)
        await until(lambda: held(w, 0), f"the promotion to stop at {hold}")
        step = hold.split(":")[0]

        # The first bot stalls (as a host under load, or a long GC pause) past the lease's ttl: the
        # second takes the timers, and the first, running again, finds its lease gone.
        await _freeze_outside_a_transaction(w, first)
        try:
            await until(lambda: _holder_is(w, second), "the second bot to take the lease")
        finally:
            first.proc.send_signal(signal.SIGCONT)

        async def ended() -> Promotion | None:
            (row,) = await promotions_of(w, 1)
            return row if row.state in ENDED else None

        await until(ended, "the new lease holder to settle the promotion")
        (row,) = await promotions_of(w, 1)
        assert row.state is outcome and row.after_restart
        (entry,) = [e for e in promotions.entries(row) if e.step.value == step]
        # The first bot released the step it was in, and touched nothing more ...
        assert entry.phase is Phase.FAILED and entry.released
        assert "the timer lease passed to another bot process" in entry.note
        assert entry.runner is not None and entry.runner.pid == first.proc.pid
        assert row.error == entry.note
        # ... before the second settled it: the release is audited before the outcome.
        async with w.store.read() as session:
            events = [(e.action, e.at) for e in await audit_trail.events_for(session, 1)]
        actions = [action for action, _ in events]
        released = actions.index(f"promotion {step} failed")
        settled = actions.index(f"promotion {outcome.value}")
        assert released < settled and events[released][1] <= events[settled][1]
        assert first.proc.poll() is None  # it lives on, without the timers

        official = w.repo / "runs" / "official"
        if outcome is PromotionState.UNDONE:  # it stopped before the move: the tree is as it was
            assert folder.is_dir() and not (official / folder.name).exists()
            assert not (folder / "triage.json").exists() and not (official / "MANIFEST.json").exists()
        else:  # it stopped after the move: finished, the MANIFEST made from the folders
            assert not folder.exists() and (official / folder.name).is_dir()
            written = read_manifest(official / "MANIFEST.json")
            assert written is not None
            again = build_manifest(scan(official_folders(official)), datetime.now(UTC))
            assert written.model_dump(exclude={"generated"}) == again.model_dump(exclude={"generated"})
        word = "was undone" if outcome is PromotionState.UNDONE else "is official"

        def told() -> bool:
            threads = [
                r for m in w.standin.messages(CHANNEL) for r in w.standin.thread(CHANNEL, str(m["ts"]))
            ]
            return any(word in card_text(m) for m in threads)

        await until(told, "the run's thread to say how the promotion ended")

        def card_says() -> bool:
            card = next(m for m in w.standin.messages(CHANNEL) if "Promotion #1" in card_text(m))
            text = card_text(card)
            return "the timer lease passed to another bot process" in text and outcome.value.upper() in text

        await until(card_says, "the promotion card to say the lease passed and how it ended")


async def _freeze_outside_a_transaction(w: World, bot: BotProcess) -> None:
    """SIGSTOP `bot` at a moment it holds no open transaction. Frozen inside one (a tick's or a
    heartbeat's), it would keep its row locks, and PostgreSQL would make the other bot wait for the lease
    row until it ran again: a freeze this test does not mean to stage. A transaction still open half a
    second after the freeze, with the same start, is the frozen bot's (the other's last milliseconds)."""
    for _ in range(20):
        bot.proc.send_signal(signal.SIGSTOP)
        before = await _open_transactions(w)
        await asyncio.sleep(0.5)  # a sampling interval, not a wait for a timer
        if not before & await _open_transactions(w):
            return
        bot.proc.send_signal(signal.SIGCONT)
        await asyncio.sleep(0.2)
    raise AssertionError("the bot was inside a transaction at each of 20 freezes")


async def _open_transactions(w: World) -> set[tuple[int, str]]:
    async with w.store.read() as session:
        rows = await session.execute(
            text(
                "SELECT pid, xact_start::text FROM pg_stat_activity WHERE datname = current_database() "
                "AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()"
            )
        )
        return {(int(pid), str(start)) for pid, start in rows.all()}


async def _holder_is(w: World, bot: BotProcess) -> bool:
    return await w.lease_pid() == bot.proc.pid
