"""A promotion never half done: a real bot process SIGKILLed at each step of a promotion, restarted, and
the tree it finds settled (undone before the move, finished after it) with the card and thread saying
which; and two bot processes sharing PostgreSQL running two promotions, one at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bot_process import CONFIG, BotProcess, World, request_and_approve, world
from harness import CHANNEL, SECRET
from test_e2e_run import card_text
from waiting import until

from bot.csb.promotion.manifest_file import read_manifest
from bot.domain.promotion_flow import Phase, PromotionState, Step
from bot.engine.promotion_runner import HOLD_ENV
from bot.playground import ADMIN, APPROVER, SlackDriver
from bot.store import promotions
from bot.store.records import Promotion

POLICY = f"""
[policy.official.approvers]
users = ["{APPROVER}", "{ADMIN}"]
"""
ENDED = {PromotionState.PROMOTED, PromotionState.UNDONE, PromotionState.LOST}


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
