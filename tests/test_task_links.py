"""A task folder whose `environment/` or `environment/Dockerfile` is a symlink out of it: the card names
the task and refuses it, and a launch that comes anyway (the checkout changed after approval) writes
nothing outside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_kit import engine_kit
from harness import copy_bench, running_bot
from idle import run_until_idle
from test_e2e_run import card_text, labels, request_card

from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole

pytestmark = pytest.mark.slow

TASK = "benchmarks/tasks/csb_sdlc_fix/slugify-punctuation-fix-001"
OUTSIDE_TEXT = "a file outside the checkout\n"


def _link_out(repo: Path, outside: Path, which: str) -> None:
    """Make the task's `environment/Dockerfile` (or its whole `environment/`) a link to `outside`."""
    environment = repo / TASK / "environment"
    if which == "Dockerfile":
        outside.write_text(OUTSIDE_TEXT)
        (environment / "Dockerfile").unlink()
        (environment / "Dockerfile").symlink_to(outside)
        return
    outside.mkdir()
    for path in environment.iterdir():
        path.rename(outside / path.name)
    environment.rmdir()
    environment.symlink_to(outside)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("which", ["Dockerfile", "environment"])
async def test_a_task_linking_out_of_its_folder_is_refused_on_the_card(tmp_path: Path, which: str) -> None:
    repo = copy_bench(tmp_path)
    _link_out(repo, tmp_path / "outside", which)
    rel = "environment/Dockerfile" if which == "Dockerfile" else "environment"
    async with running_bot(tmp_path, repo=repo) as h:
        card = await request_card(h, "run csb_sdlc_fix")
        shown = card_text(card)
        assert f"`slugify-punctuation-fix-001` ({rel} is a link out of the task folder)" in shown
        assert labels(card) == ["Reject", "Edit"]


@pytest.mark.parametrize("which", ["Dockerfile", "environment"])
async def test_a_lane_launched_anyway_never_writes_through_the_link(tmp_path: Path, which: str) -> None:
    async with engine_kit(tmp_path) as kit:
        run_id = await kit.approve("csb_sdlc_fix")
        outside = tmp_path / "outside"
        _link_out(kit.repo, outside, which)  # after approval: preflight saw a clean task
        before = _files(outside) if outside.is_dir() else None
        await run_until_idle(kit.engine, kit.store)
        if which == "Dockerfile":
            assert outside.read_text() == OUTSIDE_TEXT
        else:
            assert _files(outside) == before
        lanes = await kit.lanes(run_id)
        [mcp] = [lane for lane in lanes if lane.role == LaneRole.MCP and lane.task_id in TASK]
        assert mcp.state != LaneStatus.PASSED
