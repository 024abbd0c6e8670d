"""End to end: a finished run compared with official (a planted regression in the MANIFEST's reference),
its charts in the thread, `/csb compare` and `/csb runs`, and every bad input answered in one line."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, UNPACED, Harness, running_bot
from test_e2e_run import card_text, request_card

from bot.playground import APPROVER, OUTSIDER, REQUESTER

pytestmark = pytest.mark.slow

SUITE = "csb_sdlc_fix"
TASKS = ("slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001")
# Alpha high enough that two regressions and no fix (McNemar p = 0.5) count as significant.
CONFIG = UNPACED + "regression_alpha = 0.6\n"


def write_manifest(repo: Path, suite: str = SUITE) -> None:
    """Official passed every task in both lanes; the example bench's baseline fails two of them (planted)."""
    tasks = {task: {"status": "passed", "reward": 1.0} for task in TASKS}
    runs = {
        f"{suite}/{config}": {"model": "anthropic/claude-haiku-4-5-20251001", "tasks": tasks}
        for config in ("baseline-local-direct", "mcp-remote-direct")
    }
    path = repo / "runs" / "official" / "MANIFEST.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"runs": runs}))


async def finished_run(h: Harness) -> dict[str, Any]:
    card = await request_card(h)
    assert (await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
    await h.deliver()
    await h.run_lanes()
    return card


async def ask(h: Harness, text: str) -> str:
    before = len(h.ephemeral_texts(REQUESTER))
    assert (await h.driver.slash_command(REQUESTER, text)).status == 200
    await h.deliver()
    replies = h.ephemeral_texts(REQUESTER)[before:]
    assert len(replies) == 1, replies
    return replies[0]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def test_report_line_against_official_charts_and_compare(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, config_text=CONFIG, csb_database_url=db_url) as h:
        write_manifest(h.repo)
        card = await finished_run(h)
        report = h.thread(card)
        text = "\n".join(card_text(m) for m in report)
        assert ":warning: vs official: -33.3 pts, 2 regressions (exact McNemar p = 0.500 < 0.6)" in text
        assert "Regressed against official: `pagination-offset-fix-001` (baseline-local-direct)" in text
        assert "`config-merge-nested-fix-001` (baseline-local-direct)" in text
        final_card = h.standin.message(CHANNEL, card["ts"])
        assert final_card is not None
        assert ":warning: vs official: -33.3 pts, 2 regressions (exact McNemar p = 0.500 < 0.6)" in card_text(
            final_card
        )

        files = [f for f in h.standin.files.shared() if f.thread_ts == card["ts"]]
        by_name = {f.filename: f for f in files}
        assert set(by_name) >= {"run-1-pass-rates.png", "run-1-rewards.png", "run-1-chart-data.csv"}
        for name in ("run-1-pass-rates.png", "run-1-rewards.png"):
            stored = by_name[name]
            assert stored.content is not None and png_size(stored.content) == (960, 540)
            assert stored.extra["alt_txt"]
        assert (
            "csb_sdlc_fix: baseline 1/3 (33 %), MCP 3/3 (100 %)"
            in by_name["run-1-pass-rates.png"].extra["alt_txt"]
        )
        numbers = (by_name["run-1-chart-data.csv"].content or b"").decode()
        assert "pass_rates,csb_sdlc_fix,3,1,3,0.333333," in numbers

        compared = await ask(h, "compare 1 official")
        assert compared.startswith("*run #1 vs official*")
        assert "Regressions (passed → failed): 2*" in compared
        assert "`pagination-offset-fix-001` (baseline-local-direct)" in compared
        assert "Differs: config" not in compared and "agent `agents.claude_baseline_agent" in compared
        assert "1/3 vs 3/3 passed, -66.7 pts" in compared  # the baseline lane, csb_sdlc_fix
        (chart,) = [f for f in h.standin.files.shared() if f.filename == "comparison.png"]
        assert chart.channel == CHANNEL and chart.thread_ts is None and chart.content is not None
        assert png_size(chart.content) == (960, 540)
        assert "baseline-local-direct csb_sdlc_fix: -66.7 points" in chart.extra["alt_txt"]
        by_role = await ask(h, "compare official 1 --lane mcp")
        assert "*mcp*" in by_role and "Regressions" not in by_role

        listing = await ask(h, "runs --suite csb_sdlc_fix --last 5")
        assert "*#1*" in listing and "baseline 1/3, 0.33" in listing and "MCP 3/3, 0.83" in listing
        assert "No finished run matches." in await ask(h, "runs --model sonnet")


async def test_bad_compare_input_is_answered_in_one_line(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await finished_run(h)
        # No MANIFEST: no line against official, no warning on the card.
        assert "vs official" not in "\n".join(card_text(m) for m in [*h.thread(card), h.last_card()])
        queued = await request_card(h)  # run #2: approved but never run
        assert (await h.driver.click_button(APPROVER, CHANNEL, queued["ts"], "Approve")).status == 200
        await h.deliver()
        cases = {
            "compare 1 1": "run #1 compared with itself",
            "compare official official": "official compared with itself",
            "compare 99 official": "run #99 does not exist",
            "compare 1 2": "run #2 is not finished (it is queued)",
            "compare 1 official": "no official results: the CSB checkout has no runs/official/MANIFEST.json",
            "compare 1": "give two sides",
            "compare 1 official --lane sideways": "`--lane` takes baseline, mcp, both",
            "runs --last 0": "`--last` takes a number from 1 to 50",
            "runs --colour red": "unknown flag `--colour`",
        }
        for typed, expected in cases.items():
            reply = await ask(h, typed)
            assert reply.splitlines()[0].startswith(expected), (typed, reply)
            assert reply.splitlines()[-1].startswith("Usage: `/csb "), reply
        # Runs are shown as `/csb status` shows them: an outsider typing elsewhere sees neither run #1 nor
        # its headline.
        await h.driver.slash_command(OUTSIDER, "compare 1 official", "C0NOBOT")
        await h.deliver()
        (hidden,) = h.ephemeral_texts(OUTSIDER)
        await h.driver.slash_command(OUTSIDER, "runs", "C0NOBOT")
        await h.deliver()
        listing = h.ephemeral_texts(OUTSIDER)[-1]
        assert hidden.startswith(
            "run #1 is shown only in its own channel, to its requester, approvers and admins"
        )
        assert listing == "No finished run matches."
        write_manifest(h.repo, suite="csb_sdlc_debug")
        reply = await ask(h, "compare 1 official")
        assert reply.startswith("run #1 and official share no task in the same lane config"), reply
