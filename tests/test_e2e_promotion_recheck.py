"""Two promotions approved together, end to end: the second is checked again when it starts executing,
against what its card showed (its run's files and the MANIFEST entries its diff touches). Of the same
suite's entries, the first is promoted and the second is void before anything moves; of different
suites, both are promoted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from test_e2e_promotion import POLICY, ask, execute
from test_e2e_run import card_text, request_card

from bot.csb.promotion.manifest_file import read_manifest
from bot.playground import ADMIN, APPROVER, REQUESTER
from bot.store import audit as audit_trail

pytestmark = pytest.mark.slow  # real child processes


async def finished(h: Harness, suite: str, number: int) -> Path:
    """Run #`number` of `suite` approved and run to its end; its staging folder."""
    card = await request_card(h, f"run {suite}")
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
    await h.deliver()
    await h.run_lanes()
    (folder,) = [p for p in (h.repo / "runs" / "staging").iterdir() if p.name.endswith(f"_{number}")]
    return folder


def card_of(h: Harness, promotion: int) -> dict[str, Any]:
    (card,) = [m for m in h.cards() if f"Promotion #{promotion}* of run" in card_text(m)]
    return h.standin.message(CHANNEL, card["ts"]) or card


async def approve(h: Harness, promotion: int) -> None:
    before = len(h.ephemeral_texts(ADMIN))
    await h.driver.click_button(ADMIN, CHANNEL, card_of(h, promotion)["ts"], "Approve")
    await h.deliver()
    assert h.ephemeral_texts(ADMIN)[before:] == []  # the approval counted: approved


def run_dirs(repo: Path) -> set[str]:
    """Every run folder the MANIFEST's history names."""
    manifest = read_manifest(repo / "runs" / "official" / "MANIFEST.json")
    assert manifest is not None
    return {run.run_dir for tasks in manifest.run_history.values() for t in tasks.values() for run in t.runs}


async def test_the_second_promotion_of_the_same_entries_is_void_at_execution_start(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        first, second = await finished(h, "csb_sdlc_fix", 1), await finished(h, "csb_sdlc_fix", 2)
        await ask(h, REQUESTER, "promote 1")
        await ask(h, REQUESTER, "promote 2")
        for promotion in (1, 2):
            assert "6 added · 0 replaced · 0 kept" in card_text(card_of(h, promotion))
            await approve(h, promotion)  # both approved before either runs: each card held then
        await execute(h)  # the first claims runs/official and is promoted
        await execute(h)  # then the second starts: what its card showed no longer holds

        assert "PROMOTED" in card_text(card_of(h, 1))
        text = card_text(card_of(h, 2))
        assert "VOID" in text, text
        assert (
            ":warning: *Void*: the MANIFEST entries this promotion would change changed since the card "
            "was drawn (checked again as it started)"
        ) in text
        assert "*Steps*" not in text  # no step started: nothing moved, nothing written
        assert second.is_dir() and not (h.repo / "runs" / "official" / second.name).exists()
        assert not (second / "triage.json").exists()
        assert run_dirs(h.repo) == {first.name}  # the MANIFEST holds only the first's changes

        told = [
            card_text(m)
            for card in h.cards()
            for m in h.thread(card)
            if "Promotion #2 of run #2 is void" in card_text(m)
        ]
        assert len(told) == 1 and "Ask again with `/csb promote 2`" in told[0]
        assert "Why: the MANIFEST entries this promotion would change changed" in told[0]
        async with h.bot.store.read() as session:
            actions = [e.action for e in await audit_trail.events_for(session, 2)]
        assert actions[-3:] == ["promotion approval", "promotion approved", "promotion voided"]
        assert not any(a.startswith("promotion move") for a in actions)

        # The operator asks again: a fresh card, drawn on the MANIFEST as it is now.
        await ask(h, REQUESTER, "promote 2")
        assert "0 added · 6 replaced · 0 kept" in card_text(card_of(h, 3))


async def test_two_promotions_of_different_suites_both_proceed(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        fix, debug = await finished(h, "csb_sdlc_fix", 1), await finished(h, "csb_sdlc_debug", 2)
        await ask(h, REQUESTER, "promote 1")
        await ask(h, REQUESTER, "promote 2")
        for promotion in (1, 2):
            await approve(h, promotion)
        await execute(h)
        await execute(h)  # the first changed the MANIFEST, but none of the second's entries

        for promotion in (1, 2):
            text = card_text(card_of(h, promotion))
            assert "PROMOTED" in text and "compare: as the diff shown" in text, text
        official = h.repo / "runs" / "official"
        assert (official / fix.name).is_dir() and (official / debug.name).is_dir()
        assert run_dirs(h.repo) == {fix.name, debug.name}
