"""Cancel, drain and rerun failed, end to end: signed clicks and commands over HTTP, the Slack stand-in,
a real SQLite file and the scripted Harbor stand-in as real child processes; the clock is moved by hand.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from engine_kit import kill_all
from harness import CHANNEL, Harness, running_bot
from idle import run_until_idle
from lane_waits import running_count
from test_e2e_run import card_text

from bot.domain.errors import UserInputError
from bot.domain.outcome import LaneStatus
from bot.playground import APPROVER, OUTSIDER, REQUESTER, buttons
from bot.services.control_args import parse_cancel_args, parse_rerun_args, parse_resume_args
from bot.slack.views.cancel_modal import MODE_ACTION, MODE_BLOCK, REASON_ACTION, REASON_BLOCK
from bot.store import audit, requests, runs
from bot.store.models import Run, RunState

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"
STAGING_APPROVER_ONLY = f"""
[policy.staging.approvers]
anyone = false
users = ["{APPROVER}"]
"""


async def current_run(h: Harness, run_id: int = 1) -> Run:
    async with h.bot.store.read() as session:
        run = await runs.get_run(session, run_id)
    assert run is not None
    return run


@asynccontextmanager
async def bot(tmp_path: Path, **overrides: Any) -> AsyncIterator[Harness]:
    """The harness's bot; if the test fails, its lanes (some hang by design) are killed, not awaited."""
    async with running_bot(tmp_path, **overrides) as h:
        try:
            yield h
        except BaseException:
            await kill_all(h.bot.engine, h.bot.store)
            raise


def script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviours: dict[str, str]) -> None:
    path = tmp_path / "standin-script.json"
    path.write_text(json.dumps(behaviours))
    monkeypatch.setenv("HARBOR_STANDIN_SCRIPT", str(path))


async def approved_run(h: Harness, text: str = "run csb_sdlc_fix --parallel 4") -> dict[str, Any]:
    """The card of an approved run whose first lanes have started."""
    await h.driver.slash_command(REQUESTER, text)
    await h.deliver()
    card = h.last_card()
    await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
    await h.deliver()
    await h.bot.engine.tick()
    await h.deliver()
    current = h.standin.message(CHANNEL, card["ts"])
    assert current is not None
    return current


async def lane_states(h: Harness, run_id: int = 1) -> dict[tuple[str, str], LaneStatus]:
    async with h.bot.store.read() as session:
        return {(lane.task_id, lane.role): lane.state for lane in await runs.run_lanes(session, run_id)}


async def run_state(h: Harness, run_id: int = 1) -> RunState:
    async with h.bot.store.read() as session:
        run = await runs.get_run(session, run_id)
    assert run is not None
    return run.state


async def audit_trail(h: Harness, request_id: int = 1) -> list[tuple[str, str, str | None]]:
    async with h.bot.store.read() as session:
        events = await audit.events_for(session, request_id)
    return [(event.action, event.actor, event.reason) for event in events]


def labels(message: dict[str, Any]) -> list[str]:
    return [button.text for button in buttons(message.get("blocks", []))]


def thread_texts(h: Harness, card: dict[str, Any]) -> str:
    return "\n".join(card_text(message) or str(message.get("text", "")) for message in h.thread(card))


def modal_values(mode: str, reason: str) -> dict[str, dict[str, dict[str, Any]]]:
    return {
        MODE_BLOCK: {MODE_ACTION: {"type": "radio_buttons", "selected_option": {"value": mode}}},
        REASON_BLOCK: {REASON_ACTION: {"type": "plain_text_input", "value": reason}},
    }


async def test_cancel_button_asks_why_then_stops_running_lanes(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    async with bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        assert running_count(h.bot.engine.executor) == 4  # two pairs at the default 4 slots
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Cancel")
        await h.deliver()
        (view_id,) = h.standin.views
        assert "running" in json.dumps(h.standin.views[view_id]["blocks"])

        response = await h.driver.submit_view(REQUESTER, view_id, modal_values("cancel", "wrong model"))
        assert response.status == 200
        await h.deliver()
        assert await run_state(h) is RunState.CANCELLING
        states = await lane_states(h)
        assert states[MERGE, "baseline"] is LaneStatus.CANCELLED  # queued: dropped at once

        # SIGINT: a CancelledError result, exit 130; still cancelled
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert set((await lane_states(h)).values()) == {LaneStatus.CANCELLED}
        assert await run_state(h) is RunState.CANCELLED
        assert "cancelled run #1: wrong model" in thread_texts(h, card)
        assert ("cancel requested", REQUESTER, "wrong model") in await audit_trail(h)
        assert ("cancelled", "csb-bot", None) in await audit_trail(h)


async def test_modal_without_a_reason_stays_open(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    async with bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Cancel")
        await h.deliver()
        (view_id,) = h.standin.views
        response = await h.driver.submit_view(REQUESTER, view_id, modal_values("cancel", "  "))
        assert response.json is not None and response.json["response_action"] == "errors"
        assert REASON_BLOCK in response.json["errors"]
        assert await run_state(h) is RunState.RUNNING
        await h.driver.slash_command(REQUESTER, "cancel 1 done here")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)


async def test_drain_lets_running_lanes_finish(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARBOR_STANDIN_DELAY", "0.5")
    async with bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.driver.slash_command(REQUESTER, "cancel 1 --drain out of budget")
        await h.deliver()
        assert "draining run #1: out of budget" in h.ephemeral_texts(REQUESTER)[-1]
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        states = await lane_states(h)
        assert states[SLUG, "baseline"] is LaneStatus.PASSED and states[PAGE, "mcp"] is LaneStatus.PASSED
        assert (
            states[MERGE, "baseline"] is LaneStatus.CANCELLED and states[MERGE, "mcp"] is LaneStatus.CANCELLED
        )
        assert await run_state(h) is RunState.CANCELLED
        assert "draining run #1" in thread_texts(h, card)
        assert ("drain requested", REQUESTER, "out of budget") in await audit_trail(h)


async def test_a_drained_run_offers_the_rest_and_the_click_requests_exactly_it(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARBOR_STANDIN_DELAY", "0.5")
    async with bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.driver.slash_command(REQUESTER, "cancel 1 --drain out of budget")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        report = next(
            m for m in h.thread(card) if "Run the rest" in [b.text for b in buttons(m.get("blocks", []))]
        )
        assert f"*1 task not run*: `{MERGE}`" in json.dumps(report["blocks"])
        await h.driver.click_button(REQUESTER, CHANNEL, report["ts"], "Run the rest")
        await h.deliver()
        assert await rerun_tasks(h, 2) == [MERGE]  # not the tasks that ran to an end
        assert "Rerun of #1: 0 failed, 0 errored, 2 cancelled lanes (1 task run again)" in card_text(
            h.cards()[-1]
        )
        assert ("rerun requested", REQUESTER, "request #2 over 1 task") in await audit_trail(h)


async def test_who_may_cancel_is_policy(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    policy = tmp_path / "policy.toml"
    policy.write_text(STAGING_APPROVER_ONLY)
    async with bot(tmp_path, csb_database_url=db_url, csb_config=policy) as h:
        card = await approved_run(h)
        await h.driver.click_button(OUTSIDER, CHANNEL, card["ts"], "Cancel")
        await h.deliver()
        await h.driver.slash_command(OUTSIDER, "cancel 1 --drain I want my slots")
        await h.deliver()
        await h.driver.slash_command(REQUESTER, "cancel 1")
        await h.deliver()
        refusal, again, no_reason = h.ephemeral_texts()
        assert f"<@{REQUESTER}>" in refusal and f"<@{APPROVER}>" in refusal and "may cancel" in refusal
        assert "may drain" in again
        assert "say why" in no_reason
        assert h.standin.views == {}
        assert await run_state(h) is RunState.RUNNING
        refused = [event for event in await audit_trail(h) if event[0].startswith("refused")]
        assert [(action, actor) for action, actor, _ in refused] == [
            ("refused cancel or drain", OUTSIDER),  # the button
            ("refused drain", OUTSIDER),  # the command
        ]
        assert all("may" in why for _, _, why in refused)  # why: who may
        await h.driver.slash_command(APPROVER, "cancel 1 approvers may")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
        assert await run_state(h) is RunState.CANCELLED


async def test_paused_run_is_resumed_by_command(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "crash", PAGE: "crash", MERGE: "crash"})
    pause_soon = "[engine]\ninfra_pause_min_attempts = 4\ninfra_pause_rate = 0.5\n"
    async with bot(tmp_path, csb_database_url=db_url, config_text=STAGING_APPROVER_ONLY + pause_soon) as h:
        card = await approved_run(h)
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert await run_state(h) is RunState.PAUSED
        card = h.standin.message(CHANNEL, card["ts"]) or {}
        assert "Paused" in card_text(card) and "`/csb resume 1` once fixed" in card_text(card)
        assert "then `/csb resume 1`" in thread_texts(h, card)
        # what it still lacks, in words; no request for them while this run holds their lanes
        assert (
            "*3 tasks not run*: they start when the run is resumed (`/csb resume 1`); "
            "if it is cancelled instead, its report offers *Run the rest*"
        ) in card_text(card)
        assert [b.text for b in buttons(card.get("blocks", []))] == ["Cancel"]
        await h.driver.slash_command(REQUESTER, "status 1")  # the card, shown to the asker alone
        await h.deliver()
        assert "*3 tasks not run*" in json.dumps(h.standin.ephemerals(REQUESTER)[-1]["blocks"])

        for user, text in ((OUTSIDER, "resume 1"), (REQUESTER, "resume 1 now"), (REQUESTER, "resume")):
            await h.driver.slash_command(user, text)
            await h.deliver()
        _card_copy, refusal, stray, missing = h.ephemeral_texts()
        assert "may resume staging runs" in refusal and f"<@{APPROVER}>" in refusal
        assert "unexpected `now`" in stray and "/csb resume &lt;run&gt;" in stray  # escaped for Slack
        assert "which run?" in missing
        assert await run_state(h) is RunState.PAUSED

        script(tmp_path, monkeypatch, {})  # the accounts are fixed: every lane passes or fails honestly
        await h.driver.slash_command(REQUESTER, "resume 1")
        await h.deliver()
        assert "resumed run #1" in h.ephemeral_texts(REQUESTER)[-1]
        assert "resumed run #1" in thread_texts(h, card)
        h.clock.advance(timedelta(minutes=15))  # past the retries' backoff
        await h.run_lanes()
        assert await run_state(h) is RunState.FINISHED
        assert "tasks not run" not in card_text(h.standin.message(CHANNEL, card["ts"]) or {})
        assert ("resumed", REQUESTER, None) in await audit_trail(h)
        run = await current_run(h)  # the pause rule counts afresh, the notes do not
        assert run.infra_failures == 0 and run.infra_failures_total >= 4
        await h.driver.slash_command(REQUESTER, "resume 1")
        await h.deliver()
        assert "is finished, not paused" in h.ephemeral_texts(REQUESTER)[-1]


async def test_rerun_failed_selects_exactly_the_failed_tasks(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {f"{PAGE}/mcp": "fp-docker_compose_fail"})  # category A, not retried
    async with bot(tmp_path, csb_database_url=db_url) as h:
        card = await approved_run(h)
        await h.driver.slash_command(REQUESTER, "rerun 1")
        await h.deliver()
        assert "still running" in h.ephemeral_texts(REQUESTER)[-1]
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        # slugify passed on both lanes; pagination's MCP lane errored, its baseline and merge's failed
        report = next(
            m for m in h.thread(card) if "Rerun failed" in [b.text for b in buttons(m.get("blocks", []))]
        )
        await h.driver.click_button(REQUESTER, CHANNEL, report["ts"], "Rerun failed")
        await h.driver.slash_command(REQUESTER, "rerun 1 --only errored")
        await h.deliver()
        assert await rerun_tasks(h, 2) == [PAGE]  # the button: category A alone, not merge's genuine failure
        assert await rerun_tasks(h, 3) == [PAGE]
        cards = h.cards()
        assert "#2" in card_text(cards[-2]) and "#3" in card_text(cards[-1])

        await h.driver.click_button(APPROVER, CHANNEL, cards[-1]["ts"], "Approve")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
        assert set(await lane_states(h, 3)) == {(PAGE, "baseline"), (PAGE, "mcp")}
        assert ("rerun requested", REQUESTER, "request #3 over 1 task") in await audit_trail(h)
        # By cause, as CSB's rerun_failed.py --filter.
        await h.driver.slash_command(REQUESTER, "rerun 1 --only docker_compose_fail")
        await h.driver.slash_command(REQUESTER, "rerun 1 --only invalid")
        await h.deliver()
        assert await rerun_tasks(h, 4) == [PAGE]
        assert "has no task with a lane invalid; nothing to rerun" in h.ephemeral_texts(REQUESTER)[-1]


async def rerun_tasks(h: Harness, request_id: int) -> list[str]:
    async with h.bot.store.read() as session:
        request = await requests.get_request(session, request_id)
    assert request is not None and request.rerun_of == 1
    spec = request.spec
    assert spec.params.selection_file and (h.repo / spec.params.selection_file).is_file()
    return [task.task_id for task in spec.tasks]


def test_command_arguments() -> None:
    parsed = parse_cancel_args("#12 --drain the disk is full")
    assert (parsed.run_id, parsed.drain, parsed.reason) == (12, True, "the disk is full")
    assert not parse_cancel_args("12 wrong model").drain
    with pytest.raises(UserInputError, match="say why"):
        parse_cancel_args("12 --drain")
    assert parse_rerun_args("3").only == {LaneStatus.FAILED, LaneStatus.ERRORED, LaneStatus.TIMEOUT}
    assert parse_rerun_args("3 --only=timeout,errored").only == {LaneStatus.TIMEOUT, LaneStatus.ERRORED}
    mixed = parse_rerun_args("3 --only api_rate_limit,zero_token,invalid,failed")
    assert (mixed.only, mixed.causes, mixed.invalid) == (
        {LaneStatus.FAILED},
        {"api_rate_limit", "zero_token"},
        True,
    )
    with pytest.raises(UserInputError, match="a cause: token_refresh_403, verifier_parse_error"):
        parse_rerun_args("3 --only api_ratelimit")
    with pytest.raises(UserInputError, match="failed, errored, timeout"):
        parse_rerun_args("3 --only passed")
    assert parse_resume_args(" #7 ") == 7
    with pytest.raises(UserInputError, match="expected a run number"):
        parse_resume_args("seven")


async def test_stop_texts_count_lanes_in_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    overrides = f'[policy.staging.override_approvers]\nusers = ["{APPROVER}"]\n'
    async with bot(tmp_path, config_text=overrides) as h:
        card = await approved_run(h, "run csb_sdlc_fix --baseline-only --parallel 2 --allow-unpaired")
        await h.driver.slash_command(REQUESTER, "cancel 1 wrong model")
        await h.deliver()
        (said,) = h.ephemeral_texts(REQUESTER)
        assert "1 queued lane dropped; 2 running lanes are being stopped." in said
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        assert "1 queued lane dropped" in thread_texts(h, card)
