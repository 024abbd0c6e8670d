"""End to end over HTTP: /csb run → approval card → Approve → paired lanes → status thread and summary."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from lane_waits import running_count

from bot.playground import APPROVER, OUTSIDER, REQUESTER, buttons

pytestmark = pytest.mark.slow


def card_text(message: dict[str, Any]) -> str:
    """Every text of a message's blocks, flattened, so assertions read like what a person sees."""
    parts: list[str] = []
    for block in message.get("blocks", []):
        text = block.get("text")
        if isinstance(text, dict):
            parts.append(text.get("text", ""))
        for item in block.get("fields", []) + block.get("elements", []):
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                parts.append(item["text"])
    return "\n".join(parts)


def labels(message: dict[str, Any]) -> list[str]:
    return [b.text for b in buttons(message.get("blocks", []))]


async def request_card(h: Harness, text: str = "run csb_sdlc_fix") -> dict[str, Any]:
    response = await h.driver.slash_command(REQUESTER, text)
    assert response.status == 200
    await h.deliver()
    return h.last_card()


async def test_run_approve_lanes_and_summary(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        shown = card_text(card)
        for expected in (
            "anthropic/claude-haiku-4-5-20251001",
            "csb_sdlc_fix",
            "`paired`",
            "mcp-remote-direct",
            "slots",
            "`staging`",
        ):
            assert expected in shown
        assert labels(card) == ["Approve", "Reject", "Edit"]

        assert (await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        assert "Approved" in card_text(card) and f"<@{APPROVER}>" in card_text(card)
        assert labels(card) == ["Cancel"]  # the approved card is now the run's status card

        await h.run_lanes()
        report = card_text(h.thread(card)[-1])
        lines = re.findall(r"`([\w.-]+)`  (baseline \w+ \S+) · (MCP \w+ \S+)", report)
        assert lines, report
        outcomes = {task: (base, mcp) for task, base, mcp in lines}
        assert outcomes == EXPECTED_FIX
        assert "baseline 1/3 (33.3 %)" in report and "MCP 3/3 (100.0 %)" in report
        assert "not reported" not in report  # usage of both lanes, the MCP lane's run from a task copy


# The example bench's stand-in rule: MCP applies the reference fix, baseline only on easy tasks.
EXPECTED_FIX = {
    "slugify-punctuation-fix-001": ("baseline passed 1.00", "MCP passed 1.00"),
    "pagination-offset-fix-001": ("baseline failed 0.00", "MCP passed 1.00"),
    "config-merge-nested-fix-001": ("baseline failed 0.00", "MCP passed 0.50"),
}


async def reject_with_reason(h: Harness, user: str, card: dict[str, Any], reason: str) -> None:
    """Click Reject, then submit the modal it opens, as a person would."""
    await h.driver.click_button(user, CHANNEL, card["ts"], "Reject")
    await h.deliver()
    (view_id,) = h.standin.views
    values = {"reject.reason": {"value": {"type": "plain_text_input", "value": reason}}}
    response = await h.driver.submit_view(user, view_id, values)
    assert response.status == 200
    await h.deliver()


async def test_reject_asks_a_reason_updates_card_and_launches_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        await reject_with_reason(h, APPROVER, card, "wrong model for this week")
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        shown = card_text(card)
        assert "Rejected" in shown and f"<@{APPROVER}>" in shown and "wrong model for this week" in shown
        assert labels(card) == []
        await h.bot.engine.tick()
        assert running_count(h.bot.engine.executor) == 0
        assert not (h.repo / "runs").exists()


async def test_two_concurrent_approvals_launch_once(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        clicks = [
            h.driver.click_button(user, CHANNEL, card["ts"], "Approve") for user in (APPROVER, OUTSIDER)
        ]
        assert [r.status for r in await asyncio.gather(*clicks)] == [200, 200]
        await h.deliver()
        texts = h.ephemeral_texts()
        assert len([t for t in texts if "already approved" in t]) == 1, texts
        await h.run_lanes()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        reports = [m for m in h.thread(card) if "MCP-only wins" in card_text(m)]
        assert len(reports) == 1
        run_dirs = list((h.repo / "runs" / "staging").iterdir())
        assert len(run_dirs) == 1
