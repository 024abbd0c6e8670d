"""End to end over HTTP: signatures, /csb replies and errors, and what the card shows for each mode."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from test_e2e_run import card_text, labels, request_card

from bot.playground import REQUESTER


def row_count(tmp_path: Path, table: str) -> int:
    with sqlite3.connect(tmp_path / "bot.db") as db:
        return int(db.execute(f"select count(*) from {table}").fetchone()[0])


async def test_bad_and_stale_signatures_get_401_and_change_nothing(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        forged = await h.driver.post(
            "command=%2Fcsb&text=run", "application/x-www-form-urlencoded", signature="v0=00"
        )
        assert forged.status == 401
        h.driver.time_fn = lambda: 1_000_000.0  # a request signed 2001-09-09: a replay
        stale = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        assert stale.status == 401
        await h.deliver()
        assert h.standin.messages(CHANNEL) == []
        assert row_count(tmp_path, "run_requests") == 0


async def test_help_lists_the_subcommands(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "help")
        await h.deliver()
        (text,) = h.ephemeral_texts(REQUESTER)
        for name in ("run", "help", "suites", "status", "audit"):
            assert f"/csb {name}" in text
        assert "/csb cancel" not in text  # not served by this version, so not promised


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run csb_sdlc_nope", ["unknown suite", "csb_sdlc_fix", "csb_sdlc_debug", "csb_org_onboarding"]),
        ("run --paralel 4", ["did you mean `--parallel`?"]),
        ("run --category prod", ["staging", "official"]),
        ("run --full-config nope", ["mcp-remote-direct"]),
        ("run --parallel 1", ["at least 2"]),
        ("run --selection-file configs/missing.json", ["configs/missing.json"]),
        ("frobnicate", ["unknown subcommand"]),
    ],
)
async def test_bad_input_gets_an_ephemeral_error_with_valid_values(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    async with running_bot(tmp_path) as h:
        response = await h.driver.slash_command(REQUESTER, text)
        assert response.status == 200
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        for fragment in expected:
            assert fragment in reply
        assert h.standin.messages(CHANNEL) == []
        assert row_count(tmp_path, "run_requests") == 0


async def test_selection_file_and_single_lane_modes_on_the_card(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(
            h, "run --selection-file configs/selected_benchmark_tasks.json --baseline-only"
        )
        shown = card_text(card)
        assert "`configs/selected_benchmark_tasks.json`" in shown
        assert "`baseline-only`" in shown
        assert "3 tasks · 3 lanes" in shown
        card = await request_card(h, "run csb_sdlc_debug --full-only --parallel 3 --category official")
        shown = card_text(card)
        assert "`full-only`" in shown and "`official`" in shown and "3 slots" in shown
        assert labels(card) == ["Approve", "Reject"]


async def test_dry_run_shows_the_plan_and_requests_nothing(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --dry-run")
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "Dry run" in reply and "3 tasks · 6 lanes" in reply
        assert "BASELINE_MCP_TYPE=none" in reply and "BASELINE_MCP_TYPE=sourcegraph_full" in reply
        assert "--agent-import-path agents.claude_baseline_agent:BaselineClaudeCodeAgent" in reply
        assert h.standin.messages(CHANNEL) == []
        assert row_count(tmp_path, "run_requests") == 0


async def test_suites_status_and_audit(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "suites")
        card = await request_card(h)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.driver.slash_command(REQUESTER, "status")
        await h.driver.slash_command(REQUESTER, "audit 1")
        await h.driver.slash_command(REQUESTER, "audit 99")
        await h.deliver()
        suites, status, audit, missing = h.ephemeral_texts(REQUESTER)
        assert "`csb_sdlc_fix` 3" in suites and "(7 tasks)" in suites
        assert "#1 queued: 0/6 lanes done" in status
        assert "*requested*" in audit and "*approved*" in audit
        assert "no request or run #99" in missing


async def test_card_in_a_channel_without_the_bot_says_invite(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix", channel_id="C0NOBOT")
        await h.deliver()
        await h.deliver()
        assert h.standin.messages("C0NOBOT") == []
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "/invite @csb" in reply
