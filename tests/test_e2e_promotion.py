"""A promotion end to end through the Slack stand-in: `/csb promote <run>` posts a card with CSB's dry
run, an official approver approves it, and the engine moves the run to `runs/official` step by step, as
CSB's tools would leave it (triage.json, task_metrics.json, the MANIFEST); and the refusals: a failed
gate, files changed after the card was drawn, people who may not approve."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, copy_bench, running_bot
from summary_check import assert_summary_true
from test_e2e_run import card_text, request_card

from bot.csb.promotion.manifest_diff import official_folders
from bot.csb.promotion.manifest_file import read_manifest, write_manifest
from bot.csb.promotion.manifest_scan import build_manifest, scan
from bot.domain.clock import ManualClock
from bot.playground import ADMIN, APPROVER, OUTSIDER, REQUESTER
from bot.playground.payloads import buttons
from bot.store import audit as audit_trail

pytestmark = pytest.mark.slow  # real child processes

# Official approvers: who approves a promotion by default ([policy.promote] unset).
POLICY = f"""
[policy.official.approvers]
users = ["{APPROVER}", "{ADMIN}"]
"""


async def finished_run(h: Harness) -> Path:
    """Run #1 (`csb_sdlc_fix`, paired) approved and run to its end; its staging folder."""
    card = await request_card(h)
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
    await h.deliver()
    await h.run_lanes()
    (folder,) = (h.repo / "runs" / "staging").iterdir()
    return folder


def earlier_official(h: Harness, folder: Path) -> Path:
    """An earlier official run of the suite, and the MANIFEST over it, for the promotion to replace."""
    official = h.repo / "runs" / "official"
    older = official / f"{folder.name.rsplit('_', 1)[0]}_0"
    shutil.copytree(folder, older)
    write_manifest(
        official / "MANIFEST.json", build_manifest(scan(official_folders(official)), ManualClock().now())
    )
    return older


def promotion_card(h: Harness) -> dict[str, Any]:
    cards = [m for m in h.cards() if "Promotion #" in card_text(m)]
    assert cards, "no promotion card was posted"
    return h.standin.message(CHANNEL, cards[-1]["ts"]) or cards[-1]


async def ask(h: Harness, user: str, text: str) -> str:
    before = len(h.ephemeral_texts(user))
    await h.driver.slash_command(user, text)
    await h.deliver()
    return "\n".join(h.ephemeral_texts(user)[before:])


async def click(h: Harness, user: str, label: str) -> str:
    before = len(h.ephemeral_texts(user))
    await h.driver.click_button(user, CHANNEL, promotion_card(h)["ts"], label)
    await h.deliver()
    return "\n".join(h.ephemeral_texts(user)[before:])


async def execute(h: Harness) -> None:
    """The engine's tick claims the approved promotion; its steps run in the background until done."""
    await h.bot.engine.tick()
    await h.bot.engine.promotions.wait()
    await h.deliver()


def labels(message: dict[str, Any]) -> list[str]:
    return [button.text for button in buttons(message.get("blocks", []))]


def tree(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in (repo / "runs").rglob("*"))


async def test_an_approved_promotion_moves_the_run_as_csb_tools_would(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        folder = await finished_run(h)
        older = earlier_official(h, folder)
        summed = await assert_summary_true(h.bot.store, 1)
        listed = await ask(h, APPROVER, "runs")
        assert "#1" in listed
        await ask(h, APPROVER, "promote 1")
        text = card_text(promotion_card(h))
        assert "*Promotion #1* of run #1 to `runs/official`" in text and "waiting for approval" in text
        assert "*READY*" in text and "0 added · 6 replaced · 0 kept" in text
        assert f"Goes to `runs/official/{folder.name}`" in text

        assert "may not approve it yourself" in await click(h, APPROVER, "Approve")  # its requester
        assert "only <@" in await click(h, OUTSIDER, "Approve")
        assert folder.is_dir()  # nothing moved by a refused click
        assert await click(h, ADMIN, "Approve") == ""
        await execute(h)

        promoted = h.repo / "runs" / "official" / folder.name
        assert not folder.exists() and promoted.is_dir()
        triage = json.loads((promoted / "triage.json").read_text())
        assert triage["decision"] == "include" and triage["reviewer"] == ADMIN
        assert triage["reason_code"] == "promoted_by_approval" and triage["reviewed_at"]
        metrics = sorted(promoted.rglob("task_metrics.json"))
        assert len(metrics) == 6  # written by the checkout's extract_task_metrics.py before the move
        manifest = read_manifest(h.repo / "runs" / "official" / "MANIFEST.json")
        assert manifest is not None
        history = {
            run.run_dir for tasks in manifest.run_history.values() for t in tasks.values() for run in t.runs
        }
        assert history == {older.name, folder.name}  # the earlier results stay in the history

        text = card_text(promotion_card(h))
        assert "PROMOTED: the run is official" in text
        for step in ("extract_task_metrics", "quarantine", "triage", "move", "manifest", "compare"):
            assert f":white_check_mark: {step}" in text, step
        # The bench's export stand-in, over both official runs (the six tasks of the later one kept).
        assert (
            ":white_check_mark: export_official_results: docs/official_results written: 2 runs, 6 tasks"
            in text
        )
        exported = json.loads(
            (h.repo / "docs" / "official_results" / "data" / "official_results.json").read_text()
        )
        assert {t["run_dir"] for t in exported["tasks"]} == {folder.name}
        assert (
            ":heavy_minus_sign: validate_official_integrity: the checkout has no "
            "scripts/validate_official_integrity.py" in text
        )
        assert "written by the bot's writer of generate_manifest.py's rules" in text
        assert "compare: as the diff shown" in text
        assert labels(promotion_card(h)) == []
        run_card = next(m for m in h.cards() if "Promotion #" not in card_text(m))
        assert any("run #1 is official" in card_text(m) for m in h.thread(run_card))

        audit = await ask(h, REQUESTER, "audit 1")
        assert "*promotion requested* by <@U0BOB>" in audit and "*promotion approved* by <@U0CAROL>" in audit
        async with h.bot.store.read() as session:
            actions = [event.action for event in await audit_trail.events_for(session, 1)]
        promotion = actions[actions.index("promotion requested") :]
        assert promotion == [
            "promotion requested",
            "refused promotion approve",
            "refused promotion approve",
            "promotion approval",
            "promotion approved",
            *(
                f"promotion {step} done"
                for step in ("extract_task_metrics", "quarantine", "triage", "move", "manifest")
            ),
            "promotion export_official_results done",
            "promotion validate_official_integrity skipped",
            "promotion compare done",
            "promotion promoted",
        ]
        assert "was promoted already" in await ask(h, APPROVER, "promote 1")
        # Promoted, the run shows the same figures: its summary and its `/csb runs` line are unchanged.
        assert await assert_summary_true(h.bot.store, 1) == summed
        assert await ask(h, APPROVER, "runs") == listed


async def test_a_failed_gate_removes_approve_and_a_changed_tree_voids_it(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        folder = await finished_run(h)
        script = h.repo / "scripts" / "running" / "extract_task_metrics.py"
        script.rename(tmp_path / "extract.py")  # task_metrics.json cannot be written: a failed gate
        run_card = next(m for m in h.cards() if "Promotion #" not in card_text(m))
        (report,) = [m for m in h.thread(run_card) if "Promote to official" in labels(m)]
        await h.driver.click_button(REQUESTER, CHANNEL, report["ts"], "Promote to official")
        await h.deliver()
        card = promotion_card(h)
        assert "*BLOCKED*" in card_text(card) and "No Approve: a gate failed" in card_text(card)
        assert labels(card) == ["Reject"]
        assert await click(h, APPROVER, "Reject") == ""
        assert "REJECTED" in card_text(promotion_card(h))

        (tmp_path / "extract.py").rename(script)
        await ask(h, REQUESTER, "promote 1")
        assert "*READY*" in card_text(promotion_card(h))
        before = tree(h.repo)
        (next(folder.rglob("result.json")).parent / "note.txt").write_text("changed after the card")
        reply = await click(h, APPROVER, "Approve")
        assert "is void: the run's files changed since its card was drawn" in reply
        assert "VOID" in card_text(promotion_card(h))
        await execute(h)
        assert tree(h.repo) == sorted([*before, str((next(folder.rglob("note.txt"))).relative_to(h.repo))])
        assert "promotion voided" in await ask(h, REQUESTER, "audit 1")


async def test_force_needs_an_override_approver_and_says_what_it_bypasses(tmp_path: Path) -> None:
    config = POLICY + f'\n[policy.official.override_approvers]\nusers = ["{ADMIN}"]\n'
    async with running_bot(tmp_path, config_text=config) as h:
        folder = await finished_run(h)
        (h.repo / "scripts" / "running" / "extract_task_metrics.py").unlink()
        await ask(h, REQUESTER, "promote 1 --force")
        text = card_text(promotion_card(h))
        assert "--force: CSB's gates are bypassed" in text and "metrics_extraction (6)" in text
        assert "bypasses CSB's gates (--force); only <@" in await click(h, APPROVER, "Approve")
        assert await click(h, ADMIN, "Approve") == ""
        await execute(h)
        # Forced past the extraction gate, the promotion still runs the step: it fails loudly, is undone.
        text = card_text(promotion_card(h))
        assert "UNDONE" in text and ":x: extract_task_metrics" in text and "no extract script" in text
        assert folder.is_dir() and not (h.repo / "runs" / "official" / folder.name).exists()
        assert not (folder / "triage.json").exists()


async def test_an_export_that_fails_is_loud_and_the_run_stays_official(tmp_path: Path) -> None:
    async with running_bot(tmp_path, config_text=POLICY) as h:
        folder = await finished_run(h)
        (h.repo / "docs").mkdir()
        (h.repo / "docs" / "official_results").write_text("a file where the bundle goes")
        await ask(h, REQUESTER, "promote 1")
        assert await click(h, APPROVER, "Approve") == ""
        await execute(h)
        # After the move and the MANIFEST, the run is official; the export's failure is said everywhere.
        assert not folder.exists() and (h.repo / "runs" / "official" / folder.name).is_dir()
        text = card_text(promotion_card(h))
        assert (
            "PROMOTED" in text and ":x: export_official_results: export_official_results.py exited 1" in text
        )
        assert ":x: *Failed*: export_official_results.py exited 1" in text
        assert ":hourglass: validate_official_integrity (not yet)" in text
        run_card = next(m for m in h.cards() if "Promotion #" not in card_text(m))
        told = [
            card_text(m) for m in h.thread(run_card) if "export_official_results.py exited 1" in card_text(m)
        ]
        assert told, "the run's thread was not told the export failed"
        audit = await ask(h, REQUESTER, "audit 1")
        assert "promotion export_official_results failed" in audit and "exited 1" in audit


SHOWN = re.compile(
    r"(replaced|added) `([^`]+)` `([^`]+)`: (?:(\w+) ([\d.]+) → )?(\w+) ([\d.]+)(?: \((\w[\w ]*)\))?"
)


async def test_the_example_benchs_official_results_are_replaced_as_the_card_showed(tmp_path: Path) -> None:
    async with running_bot(tmp_path, repo=copy_bench(tmp_path, official=True), config_text=POLICY) as h:
        assert "csb_sdlc_fix_haiku_20251115_090000" in await ask(h, REQUESTER, "official")
        folder = await finished_run(h)
        await ask(h, REQUESTER, "promote 1")
        text = card_text(promotion_card(h))
        assert "(generate_manifest.py's rules, 4 official tasks now): 2 added · 4 replaced · 0 kept" in text
        shown = {(m[2], m[3]): m.groups() for m in SHOWN.finditer(text)}
        fix = "csb_sdlc_fix"
        trends = {
            (key, task): shown[(key, task)][7] for key, task in shown if shown[(key, task)][0] == "replaced"
        }
        assert trends == {  # the bench's README, "Earlier official results"
            (f"{fix}/baseline-local-direct", "slugify-punctuation-fix-001"): "better",
            (f"{fix}/baseline-local-direct", "pagination-offset-fix-001"): "worse",
            (f"{fix}/mcp-remote-direct", "slugify-punctuation-fix-001"): "same reward",
            (f"{fix}/mcp-remote-direct", "pagination-offset-fix-001"): "better",
        }
        added = {key for key, line in shown.items() if line[0] == "added"}
        assert added == {
            (f"{fix}/{c}", "config-merge-nested-fix-001")
            for c in ("baseline-local-direct", "mcp-remote-direct")
        }

        assert await click(h, APPROVER, "Approve") == ""
        await execute(h)
        assert "compare: as the diff shown" in card_text(promotion_card(h))
        written = read_manifest(h.repo / "runs" / "official" / "MANIFEST.json")
        assert written is not None
        for (key, task), (change, _, _, _, _, status, reward, _) in shown.items():
            entry = written.runs[key].tasks[task]  # what the card said the entry becomes
            assert (entry.status, entry.reward) == (status, float(reward)), (key, task)
            # Both runs had agent output: the earlier result stays in the task's history, beside the new.
            history = {run.run_dir for run in written.run_history[key][task].runs}
            earlier = {"csb_sdlc_fix_haiku_20251115_090000"} if change == "replaced" else set()
            assert history == {folder.name, *earlier}, (key, task)
        assert written.total_tasks == 6 and len(shown) == 6
