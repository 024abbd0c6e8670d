"""End to end, a run's report is read from the database only: rendered again after its run folder is moved
away (as promotion will move it), it is the same, word for word and cell for cell."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import Harness
from idle import run_until_idle
from store_reads import all_runs
from test_e2e_truthful import NO_RETRY
from test_run_control import approved_run, bot, script

from bot.slack.outbound.report_loader import build_report_view
from bot.slack.views.report import ReportMessage, paired_report
from bot.slack.views.report_csv import report_csv
from bot.store import requests, runs

pytestmark = pytest.mark.slow

SLUG, PAGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001"


async def _rendered(h: Harness) -> tuple[ReportMessage, str]:
    """The run's report and its CSV, as the bot renders them now."""
    (run,) = await all_runs(h.bot.store)
    async with h.bot.store.read() as session:
        request = await requests.get_request(session, run.request_id)
        lanes = await runs.run_lanes(session, run.id or 0)
    assert request is not None
    view = build_report_view(run, request, lanes)
    return paired_report(view), report_csv(view)


async def test_a_runs_report_is_the_same_after_its_folder_is_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {f"{SLUG}/mcp": "crash", f"{PAGE}/mcp": "error"})
    async with bot(tmp_path, config_text=NO_RETRY) as h:
        await approved_run(h)
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        before, csv_before = await _rendered(h)
        (run,) = await all_runs(h.bot.store)
        folder = h.repo / "runs" / "staging" / run.run_dir
        assert any(folder.rglob("result.json")), "the run left its trial results in its folder"
        shutil.move(folder, tmp_path / "promoted")
        assert not folder.exists()
        after, csv_after = await _rendered(h)

    assert after == before
    assert csv_after == csv_before
    # What is compared holds what the lanes produced: rewards, tokens, the crash's reason and log line.
    assert "it ends: harbor: crashed" in csv_before and "NonZeroAgentExitCodeError" in csv_before
    lines = csv_before.splitlines()
    assert len(lines) == 4, lines  # the header and the example bench's three tasks
    assert all(line.split(",")[8] for line in lines[1:]), "every baseline lane's tokens are in the report"
