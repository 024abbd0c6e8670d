"""`/csb promote <run>` and `/csb official` end to end: a real run through the example bench's Harbor
stand-in, then the promotion dry run as Slack shows it, and its refusals; nothing is ever moved."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from harness import CHANNEL, Harness, running_bot
from test_e2e_run import card_text, request_card

from bot.csb.promotion.manifest_diff import official_folders
from bot.csb.promotion.manifest_file import write_manifest
from bot.csb.promotion.manifest_scan import build_manifest, scan
from bot.csb.promotion.triage import triage_record, write_triage
from bot.domain.clock import ManualClock
from bot.playground import APPROVER, REQUESTER

pytestmark = pytest.mark.slow  # real child processes

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


async def _approved_run(h: Harness) -> None:
    """Run #1 (`csb_sdlc_fix`, paired) approved: queued."""
    card = await request_card(h)
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
    await h.deliver()


async def _finished_run(h: Harness) -> Path:
    """Run #1 approved and run to its end; its staging folder."""
    await _approved_run(h)
    await h.run_lanes()
    (folder,) = (h.repo / "runs" / "staging").iterdir()
    return folder


async def _ask(h: Harness, text: str) -> str:
    before = len(h.ephemeral_texts(REQUESTER))
    await h.driver.slash_command(REQUESTER, text)
    await h.deliver()
    return "\n".join(h.ephemeral_texts(REQUESTER)[before:])


async def test_promote_shows_gates_diff_and_destination_and_moves_nothing(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        folder = await _finished_run(h)
        official = h.repo / "runs" / "official"
        older = official / f"{folder.name.rsplit('_', 1)[0]}_0"  # an earlier official run of the suite
        shutil.copytree(folder, older)
        write_manifest(
            official / "MANIFEST.json", build_manifest(scan(official_folders(official)), ManualClock().now())
        )
        (h.repo / "scripts" / "running" / "extract_task_metrics.py").unlink()
        before = sorted(str(p.relative_to(h.repo)) for p in h.repo.rglob("*"))

        reply = await _ask(h, "promote 1 --dry-run")
        assert "*Promotion dry run* of run #1" in reply and "*BLOCKED*" in reply
        assert f"Goes to `runs/official/{folder.name}`" in reply
        assert ":white_check_mark: 0 critical issues found" in reply
        assert ":white_check_mark: 0 tasks missing result.json (6/6 have one)" in reply
        # Without the example bench's extract_task_metrics.py its trials cannot get their task_metrics.json.
        assert ":x: 6 tasks without task_metrics.json, and the checkout has no" in reply
        assert (
            "missing_task_metrics (FAIL): no task_metrics.json\n      … and 1 more" in reply
        )  # 5 shown of 6
        # The earlier run's trials are as old (copies): the later scan wins, as generate_manifest.py's `>=`.
        assert "0 added · 6 replaced · 0 kept" in reply
        assert (
            "`csb_sdlc_fix/mcp-remote-direct`: 3/3 passed (100.0%), mean reward 0.833 → 3/3 passed (100.0%)"
            in reply
        )
        assert sorted(str(p.relative_to(h.repo)) for p in h.repo.rglob("*")) == before  # nothing moved


async def test_promote_refuses_what_cannot_be_promoted(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        assert "there is no run #99" in await _ask(h, "promote 99 --dry-run")
        assert "expected a run number" in await _ask(h, "promote seven")
        await _approved_run(h)
        reply = await _ask(h, "promote 1 --dry-run")
        assert "run #1 is queued: only a finished staging run can be promoted" in reply
        await h.run_lanes()
        (folder,) = (h.repo / "runs" / "staging").iterdir()
        (h.repo / "runs" / "official" / folder.name).mkdir(parents=True)  # promoted before, by hand
        reply = await _ask(h, "promote 1 --dry-run")
        assert f":x: `[FAIL] Already exists in official`: `runs/official/{folder.name}`" in reply
        assert "*BLOCKED*" in reply
        (h.repo / "runs" / "official" / folder.name).rmdir()
        (h.repo / "runs" / "official" / "MANIFEST.json").write_text("{not json")
        reply = await _ask(h, "promote 1 --dry-run")
        assert "*BLOCKED*" in reply and "MANIFEST.json is not valid JSON" in reply
        outside = tmp_path / "elsewhere"
        folder.rename(outside)
        folder.symlink_to(outside)  # a link out of runs/
        reply = await _ask(h, "promote 1 --dry-run")
        assert "it leads out of the checkout's `runs/`: nothing will be moved" in reply
        folder.unlink()
        reply = await _ask(h, "promote 1 --dry-run")
        assert "is not in runs/staging" in reply and "nothing will be moved" in reply
        assert outside.is_dir() and not (h.repo / "runs" / "official" / folder.name).exists()


async def test_official_lists_the_manifest_per_suite_and_config(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        assert "there is no `runs/official/MANIFEST.json`" in await _ask(h, "official")
        folder = await _finished_run(h)
        official = h.repo / "runs" / "official"
        shutil.copytree(folder, official / folder.name)
        write_manifest(
            official / "MANIFEST.json", build_manifest(scan(official_folders(official)), ManualClock().now())
        )
        reply = await _ask(h, "official")
        assert f"last promoted: `{folder.name}`, no triage.json says who approved it" in reply
        write_triage(
            official / folder.name, triage_record(forced=False, reviewed_at=NOW, reviewers=[APPROVER])
        )
        reply = await _ask(h, "official")
        assert f"last promoted: `{folder.name}`, approved by {APPROVER} at 2026-03-10T12:00:00+00:00" in reply
        assert "*Official results*" in reply and "`csb_sdlc_fix`" in reply
        assert "`baseline-local-direct`: 1/3 passed (33.3%), mean reward 0.333, 0 errored tasks" in reply
        assert "`mcp-remote-direct`: 3/3 passed (100.0%), mean reward 0.833" in reply
        assert "the MANIFEST has no suite `nope`" in await _ask(h, "official nope")


async def test_app_home_reads_the_same_manifest(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.app_home_opened(REQUESTER)
        await h.deliver()
        assert "No MANIFEST yet: nothing has been promoted." in card_text(h.standin.home(REQUESTER) or {})
        folder = await _finished_run(h)
        official = h.repo / "runs" / "official"
        shutil.copytree(folder, official / folder.name)
        write_triage(
            official / folder.name, triage_record(forced=False, reviewed_at=NOW, reviewers=[APPROVER])
        )
        write_manifest(official / "MANIFEST.json", build_manifest(scan(official_folders(official)), NOW))
        await h.driver.app_home_opened(REQUESTER)
        await h.deliver()
        home = card_text(h.standin.home(REQUESTER) or {})
        assert "*Official results* (runs/official/MANIFEST.json)" in home
        mcp = "`csb_sdlc_fix/mcp-remote-direct`: 3/3 passed (100.0%), mean reward 0.833"
        assert f"{mcp} · approved by {APPROVER}" in home
        (official / "MANIFEST.json").write_text("[]")
        await h.driver.app_home_opened(REQUESTER)
        await h.deliver()
        assert ":x: MANIFEST.json is not in generate_manifest.py's shape" in card_text(
            h.standin.home(REQUESTER) or {}
        )
