"""A run over several suites writes one folder per suite, as CSB's harness does; whatever names the run's
folders (the report, `/csb status`) names those real folders, never the `{suite}` pattern they share.
`/csb status` and the Cancel modal name the folders by the same `run_folder_names`."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import running_bot
from test_e2e_run import card_text
from test_e2e_status import approved_run

from bot.csb.harbor_run import run_folder_names, run_folders
from bot.slack.views.report import ReportView
from bot.slack.views.report_csv import csv_filename

pytestmark = pytest.mark.slow

SELECTION = "configs/selected_benchmark_tasks.json"  # three tasks over two suites


async def test_a_report_over_two_suites_names_both_real_folders(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h, f"run --selection-file {SELECTION} --parallel 6")
        await h.run_lanes()
        report = card_text(h.thread(card)[-1])
        folders = sorted(str(p.relative_to(h.repo)) for p in (h.repo / "runs" / "staging").iterdir())
        assert len(folders) == 2, folders
        assert "{suite}" not in report
        assert "output " + ", ".join(f"`{folder}`" for folder in folders) in report, report


def test_folder_names_of_one_suite_and_of_several() -> None:
    one = "csb_sdlc_fix_haiku_20260102_030405_7"
    assert run_folder_names(one, ["csb_sdlc_fix"]) == [one]
    several = "{suite}_haiku_20260102_030405_8"
    assert run_folders("official", several, ["b", "a", "b"]) == [
        "runs/official/a_haiku_20260102_030405_8",
        "runs/official/b_haiku_20260102_030405_8",
    ]
    assert csv_filename(ReportView(8, run_folders("official", several, ["a", "b"]), "t", "m", [])) == (
        "run8_tasks.csv"
    )
    assert csv_filename(ReportView(7, [f"runs/staging/{one}"], "t", "m", [])) == f"{one}_tasks.csv"
