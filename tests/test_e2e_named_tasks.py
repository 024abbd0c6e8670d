"""Quick reruns of named tasks end to end through the Slack stand-in: `/csb run --tasks id,id`, to an
approved run over exactly those tasks; its refusals in one line with nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import CHANNEL, Harness, running_bot
from test_e2e_promote import _ask
from test_e2e_run import card_text, request_card

from bot.domain.states import LaneStatus
from bot.playground import APPROVER, REQUESTER
from bot.store import requests, runs

FIX = "csb_sdlc_fix"
SUITE_FILE = "benchmarks/suites/csb-example.json"


def _written(h: Harness) -> list[str]:
    folder = h.repo / "configs" / "harnesses"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


async def _lanes(h: Harness, run_id: int) -> list[tuple[str, str]]:
    async with h.bot.store.read() as session:
        return sorted((lane.task_id, lane.config) for lane in await runs.run_lanes(session, run_id))


async def test_run_named_tasks_launches_exactly_them(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        for text, words in (
            (
                "run --tasks pagination-ofset-fix-001 --suite csb_sdlc_fix",
                f"`pagination-ofset-fix-001` is not a task of suite `{FIX}` of `{SUITE_FILE}`; "
                "did you mean `pagination-offset-fix-001`?",
            ),
            ("run --tasks a --suite nosuch_suite", f"`nosuch_suite` is not a suite of `{SUITE_FILE}`"),
            (
                "run --tasks " + ",".join(f"t{n}" for n in range(21)),
                "`--tasks` names 21 tasks; a quick rerun takes at most 20",
            ),
        ):
            reply = await _ask(h, text)
            assert words in reply, (text, reply)
            assert reply.count("\n") == 1 and "Usage: `/csb run [suite]" in reply  # one line, then usage
        assert _written(h) == [] and h.cards() == []

        await _ask(
            h, "run --tasks Pagination-Offset-Fix-001,slugify-punctuation-fix-001 --suite csb_sdlc_fix"
        )
        (card,) = h.cards()
        (name,) = _written(h)
        assert f"`configs/harnesses/{name}`" in card_text(card) and "`paired`" in card_text(card)
        tasks = json.loads((h.repo / "configs" / "harnesses" / name).read_text())["tasks"]
        assert [t["task_id"] for t in tasks] == ["pagination-offset-fix-001", "slugify-punctuation-fix-001"]
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.run_lanes()
        assert await _lanes(h, 1) == [
            ("pagination-offset-fix-001", "baseline-local-direct"),
            ("pagination-offset-fix-001", "mcp-remote-direct"),
            ("slugify-punctuation-fix-001", "baseline-local-direct"),
            ("slugify-punctuation-fix-001", "mcp-remote-direct"),
        ]


def _select(message: dict[str, Any]) -> dict[str, Any] | None:
    for block in message.get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") == "run.rerun_task":
                return dict(element)
    return None


async def test_rerun_a_task_from_the_report_requests_that_task_with_the_runs_parameters(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --model anthropic/claude-sonnet-4-6 --parallel 6")
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.run_lanes()
        report = next(m for m in h.thread(card) if _select(m) is not None)
        select = _select(report)
        assert select is not None and select["placeholder"]["text"] == "Rerun a task…"
        shown = [option["text"]["text"] for option in select["options"]]
        async with h.bot.store.read() as session:
            lanes = await runs.run_lanes(session, 1)
        not_passed = {lane.task_id for lane in lanes if lane.state is not LaneStatus.PASSED}
        assert sorted(shown) == sorted({lane.task_id for lane in lanes})
        assert shown == sorted(
            shown, key=lambda task: task not in not_passed
        )  # those that did not pass first
        assert {option["description"]["text"] for option in select["options"]} == {FIX}

        await h.driver.choose(REQUESTER, CHANNEL, report["ts"], "run.rerun_task", "pagination-offset-fix-001")
        await h.deliver()
        rerun = h.last_card()
        shown_card = card_text(rerun)
        assert "anthropic/claude-sonnet-4-6" in shown_card and "`paired`" in shown_card
        (name,) = _written(h)
        assert f"`configs/harnesses/{name}`" in shown_card
        async with h.bot.store.read() as session:
            request = await requests.get_request(session, 2)
        assert request is not None and [t.task_id for t in request.spec.tasks] == [
            "pagination-offset-fix-001"
        ]
        assert request.spec.params.parallel == 6 and request.requester == REQUESTER

        option = "pagination-offset-fix-001"
        await h.driver.choose(REQUESTER, CHANNEL, report["ts"], "run.rerun_task", option, value="1:99")
        await h.deliver()
        assert "this choice is not valid any more" in h.ephemeral_texts(REQUESTER)[-1]
        assert len(h.cards()) == 2 and len(_written(h)) == 1
