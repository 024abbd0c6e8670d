"""End to end over HTTP: /csb run → approval card → Approve → paired lanes → status thread and summary."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot

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


async def test_run_approve_lanes_and_summary(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
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
        assert labels(card) == ["Approve", "Reject"]

        assert (await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        assert "Approved" in card_text(card) and f"<@{APPROVER}>" in card_text(card)
        assert labels(card) == []

        await h.run_lanes()
        thread = h.thread(card)
        assert len(thread) == 2, thread
        status, summary = thread
        assert "finished" in card_text(status)
        lines = re.findall(r"`([\w.-]+)`  (baseline \w+ \S+) · (MCP \w+ \S+)", card_text(summary))
        assert lines, card_text(summary)
        outcomes = {task: (base, mcp) for task, base, mcp in lines}
        assert outcomes == EXPECTED_FIX
        assert "*baseline*:" in card_text(summary) and "*MCP*:" in card_text(summary)


# The example bench's stand-in rule: MCP applies the reference fix, baseline only on easy tasks.
EXPECTED_FIX = {
    "slugify-punctuation-fix-001": ("baseline passed 1.00", "MCP passed 1.00"),
    "pagination-offset-fix-001": ("baseline failed 0.00", "MCP passed 1.00"),
    "config-merge-nested-fix-001": ("baseline failed 0.00", "MCP passed 0.50"),
}


async def test_reject_updates_card_and_launches_nothing(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Reject")
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        assert "Rejected" in card_text(card) and f"<@{APPROVER}>" in card_text(card)
        assert labels(card) == []
        await h.bot.engine.tick()
        assert h.bot.engine.executor.running_count == 0
        assert not (h.repo / "runs").exists()


async def test_two_concurrent_approvals_launch_once(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
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
        summaries = [m for m in h.thread(card) if "finished" in card_text(m) and "tasks)" in card_text(m)]
        assert len(summaries) == 1
        run_dirs = list((h.repo / "runs" / "staging").iterdir())
        assert len(run_dirs) == 1
