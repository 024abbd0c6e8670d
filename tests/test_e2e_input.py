"""End to end: every text a user supplies is bounded where it enters, and odd input gets one line
saying what was wrong, ending with the usage of the command that was typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from store_reads import request_count
from test_e2e_gate import prefilled_values
from test_e2e_run import request_card

from bot.domain.mrkdwn import escape
from bot.playground import APPROVER, REQUESTER
from bot.store import requests
from bot.store.models import RequestState

pytestmark = pytest.mark.slow

LONG_MODEL = "anthropic/" + "x" * 2_100
LONG_PATH = "benchmarks/suites/" + "d/" * 300 + "s.json"
LONG_REASON = "because " * 400  # 3,200 characters


@pytest.mark.parametrize(
    ("text", "expected", "usage"),
    [
        (f"run --model {LONG_MODEL}", "`--model` is 2,110 characters long; the limit is 200", "/csb run"),
        (f"run --suite-file {LONG_PATH}", "the limit is 500", "/csb run"),
        (f"run {'k' * 300}", "the bare suite key is 300 characters long; the limit is 200", "/csb run"),
        ("run --modle x", "did you mean `--model`?", "/csb run"),
        # As long as Slack sends (40,000 characters): answered in one cut line, parsed in linear time.
        ("run --" + "x" * 39_990, "unknown flag `--xxxxxxxx", "/csb run"),
        ("run --model " + "x" * 39_980, "`--model` is 39,980 characters long; the limit is 200", "/csb run"),
        ("status ²", "expected a run number (digits 0-9), got `²`", "/csb status [run]"),
        ("status " + "9" * 400, "at most 9 digits; got one of 400", "/csb status [run]"),
        ("audit ¹", "expected a run number", "/csb audit <run>"),
        (f"cancel 1 {LONG_REASON}", "the limit is 500", "/csb cancel <run> [--drain] <reason>"),
        ("cancel 99 no longer needed", "there is no run #99", "/csb cancel <run> [--drain] <reason>"),
        ("resume 99", "there is no run #99", "/csb resume <run>"),
        ("rerun 1²", "expected a run number", "/csb rerun <run>"),
    ],
)
async def test_odd_input_gets_one_reply_ending_with_its_own_usage(
    tmp_path: Path, text: str, expected: str, usage: str
) -> None:
    async with running_bot(tmp_path) as h:
        assert (await h.driver.slash_command(REQUESTER, text)).status == 200
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert expected in reply
        assert reply.splitlines()[-1].startswith(f"Usage: `{escape(usage)}"), reply  # Slack shows `<`
        assert len(reply) < 1_000  # the user's text is echoed cut short, never whole
        assert await request_count(h.bot.store) == 0


async def test_cancel_on_a_pending_request_says_it_is_a_request_and_how_to_reject(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await request_card(h)
        await h.driver.slash_command(REQUESTER, "cancel 1 wrong suite")
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "#1 is a request waiting for approval, not a run" in reply and "Reject" in reply


async def test_help_states_the_limits(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "help")
        await h.driver.slash_command(REQUESTER, "help run")
        await h.deliver()
        overview, run = h.ephemeral_texts(REQUESTER)
        assert "at most 500 characters" in overview  # the cancel reason
        assert "text of at most 200 characters" in run and "text of at most 500 characters" in run


async def test_edit_and_reject_modals_bound_what_they_accept(tmp_path: Path) -> None:
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")
        await h.deliver()
        (view_id,) = h.standin.views
        values = prefilled_values(h.standin.views[view_id])
        values["edit.model"]["value"]["value"] = LONG_MODEL
        answer = await h.driver.submit_view(REQUESTER, view_id, values)
        assert answer.json is not None and answer.json["response_action"] == "errors"
        assert answer.json["errors"]["edit.model"] == "This is 2,110 characters long; the limit is 200."
        h.standin.close_view(view_id)

        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Reject")
        await h.deliver()
        (view_id,) = h.standin.views
        reason = {"reject.reason": {"value": {"type": "plain_text_input", "value": LONG_REASON}}}
        answer = await h.driver.submit_view(APPROVER, view_id, reason)  # a forged form skips the client
        assert answer.json is not None and "At most 500 characters" in answer.json["errors"]["reject.reason"]
        await h.deliver()
        async with h.bot.store.read() as session:
            request = await requests.get_request(session, 1)
        assert request is not None and (request.state, request.revision) == (RequestState.PENDING, 1)


# What reached folder names and the card through the Edit modal: NUL, a newline, a C1 control, the
# right-to-left override and an ANSI escape.
ODD_CHARACTERS = {"\x00": "0000", "\n": "000A", "\x9b": "009B", "\u202e": "202E", "\x1b[31m": "001B"}


@pytest.mark.parametrize("field", ["model", "suite", "suite_file", "selection_file", "full_config"])
async def test_the_edit_modal_refuses_what_csb_run_refuses(tmp_path: Path, field: str) -> None:
    """One validation for both ways in: each text field of the modal refuses the characters `/csb run`
    refuses, with the same words, and the request stays as it was."""
    flag = "--" + field.replace("_", "-")
    async with running_bot(tmp_path) as h:
        card = await request_card(h)
        for odd, code in ODD_CHARACTERS.items():
            value = f"benchmarks/a{odd}b"
            await h.driver.slash_command(REQUESTER, f"run {flag} '{value}'")
            await h.deliver()
            said = f"contains an invisible or control character (U+{code})"
            assert f"`{flag}` {said}" in h.ephemeral_texts(REQUESTER)[-1]

            await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")
            await h.deliver()
            (view_id,) = h.standin.views
            values = prefilled_values(h.standin.views[view_id])
            values[f"edit.{field}"]["value"]["value"] = value  # a forged form skips the client
            answer = await h.driver.submit_view(REQUESTER, view_id, values)
            assert answer.json is not None and answer.json["response_action"] == "errors", answer.body_text
            assert answer.json["errors"] == {f"edit.{field}": f"This {said}."}
            h.standin.close_view(view_id)
        await h.deliver()
        async with h.bot.store.read() as session:
            request = await requests.get_request(session, 1)
        assert request is not None and (request.state, request.revision) == (RequestState.PENDING, 1)
        assert not any(odd in path.name for path in h.repo.rglob("*") for odd in ODD_CHARACTERS)
