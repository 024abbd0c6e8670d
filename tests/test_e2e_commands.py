"""End to end over HTTP: signatures, /csb replies and errors, and what the card shows for each mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_kit import kill_all
from harness import CHANNEL, running_bot
from store_reads import request_count
from test_e2e_run import card_text, labels, request_card
from test_run_control import MERGE, PAGE, SLUG, STAGING_APPROVER_ONLY, bot, script

from bot.domain.command_line import SUBCOMMANDS
from bot.domain.mrkdwn import escape
from bot.domain.slack_limits import MAX_SECTION_TEXT
from bot.playground import APPROVER, OUTSIDER, REQUESTER
from bot.store import requests
from bot.store.models import RequestState

pytestmark = pytest.mark.slow  # real child processes
FORM_TYPE = "application/x-www-form-urlencoded"


async def test_bad_and_stale_signatures_get_401_and_change_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        forged = await h.driver.post(
            "command=%2Fcsb&text=run", "application/x-www-form-urlencoded", signature="v0=00"
        )
        assert forged.status == 401
        h.driver.time_fn = lambda: 1_000_000.0  # a request signed 2001-09-09: a replay
        stale = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        assert stale.status == 401
        await h.deliver()
        assert h.standin.messages(CHANNEL) == []
        assert await request_count(h.bot.store) == 0


async def test_a_whole_command_signed_with_another_secret_gets_401_and_changes_nothing(
    tmp_path: Path, db_url: str
) -> None:
    """A request Bolt and the listeners could act on, its signature not the app's: the intake is the only
    check of signatures (Bolt's own is off, `bot/slack/app.py`), so this is the test that it is there."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        secret = h.driver.signing_secret
        h.driver.signing_secret = secret + "-not"
        forged = await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        assert forged.status == 401
        assert forged.json == {"error": "invalid request"}
        another = await h.driver.slash_command(REQUESTER, "help")
        h.driver.signing_secret = secret
        missing = await h.driver.post(
            "command=%2Fcsb&text=help&user_id=U0A&channel_id=C0PLAY",
            FORM_TYPE,
            headers={"X-Slack-Signature": ""},
        )
        assert (another.status, missing.status) == (401, 401)
        await h.bot.inflight.wait_idle()
        await h.deliver()
        assert h.standin.messages(CHANNEL) == []
        assert h.ephemeral_texts(REQUESTER) == []
        assert await request_count(h.bot.store) == 0


async def test_help_lists_the_subcommands(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "help")
        await h.deliver()
        (text,) = h.ephemeral_texts(REQUESTER)
        for name in SUBCOMMANDS:
            assert f"/csb {name}" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run csb_sdlc_nope", ["unknown suite", "csb_sdlc_fix", "csb_sdlc_debug", "csb_org_onboarding"]),
        ("run --paralel 4", ["did you mean `--parallel`?"]),
        ("run --category prod", ["staging", "official"]),
        ("run --full-config nope", ["mcp-remote-direct"]),
        ("run --parallel 1", ["at least 2"]),
        ("run --selection-file configs/missing.json", ["configs/missing.json"]),
        ("run --parallel 64", ["above the limit for staging runs", "from 2 to 60"]),
        ("run --suite-file benchmarks/suites/csb-example.json --selection-file configs/x.json", ["give one"]),
        ("frobnicate", ["unknown subcommand"]),
        ("status seven", ["expected a run number"]),
        ("audit 99", ["there is no request or run #99"]),
        ("resume 1 now", ["unexpected `now`"]),
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
        assert reply.splitlines()[-1].startswith("Usage: `/csb "), reply  # always ends with how to type it
        assert h.standin.messages(CHANNEL) == []
        assert await request_count(h.bot.store) == 0


async def test_selection_file_and_single_lane_modes_on_the_card(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
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
        # No baseline results exist yet, so the pairing guard refuses the single-lane run.
        assert "No clean counterpart result for 3 tasks" in shown
        assert labels(card) == ["Reject", "Edit"]


async def test_help_run_lists_what_this_checkout_and_policy_allow(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "help run")
        await h.deliver()
        (text,) = h.ephemeral_texts(REQUESTER)
        assert "`--parallel`" in text and "Example: `/csb run" in text
        assert "suites in `benchmarks/suites/csb-example.json`: `csb_org_onboarding`, `csb_sdlc_" in text
        assert "`mcp-remote-direct`" in text and "`mcp-remote-artifact`" in text
        assert (
            "staging at most" in text and "official at most" in text and "(default 6)" in text
        )  # CSB: 6 per account; none here


async def test_dry_run_shows_the_plan_and_requests_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --dry-run")
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "Dry run" in reply and "3 tasks · 6 lanes" in reply
        assert "BASELINE_MCP_TYPE=none" in reply and "BASELINE_MCP_TYPE=sourcegraph_full" in reply
        assert "--agent-import-path agents.claude_baseline_agent:BaselineClaudeCodeAgent" in reply
        assert "--timeout-multiplier 10 --job-name" in reply and "INSTRUCTION_VARIANT=mcp " in reply
        jobs_dir = "--jobs-dir 'runs/staging/csb_sdlc_fix_haiku_<time>_<run>/mcp-remote-direct'"
        assert escape(jobs_dir) in reply  # escaped for Slack, which shows `<time>`
        assert "*Preflight*" in reply and "every task folder is present" in reply
        assert "SOURCEGRAPH_ACCESS_TOKEN is set" in reply
        assert "could not be approved" not in reply
        assert h.standin.messages(CHANNEL) == []
        assert await request_count(h.bot.store) == 0


async def test_dry_run_shows_what_would_block_approval(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --baseline-only --dry-run")
        await h.deliver()
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "No clean counterpart result for 3 tasks" in reply
        assert "could not be approved" in reply
        assert await request_count(h.bot.store) == 0


async def test_suites_status_and_audit(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "suites")
        card = await request_card(h)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        for text in ("status", "audit 1", "audit 99"):  # one at a time: replies keep the order asked
            await h.driver.slash_command(REQUESTER, text)
            await h.deliver()
        suites, status, audit, missing = h.ephemeral_texts(REQUESTER)
        assert "`csb_sdlc_fix` 3" in suites and "(7 tasks)" in suites
        assert "#1 queued #1 in the queue: 0/6 lanes done" in status
        assert "*requested*" in audit and "*approved*" in audit
        assert "no request or run #99" in missing


async def test_card_in_a_channel_without_the_bot_says_invite(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix", channel_id="C0NOBOT")
        await h.deliver()
        await h.deliver()
        assert h.standin.messages("C0NOBOT") == []
        (reply,) = h.ephemeral_texts(REQUESTER)
        assert "/invite @csb" in reply
        async with h.bot.store.read() as session:
            request = await requests.get_request(session, 1)
        assert request is not None and request.reason is not None
        assert request.state is RequestState.REJECTED and "not in the channel" in request.reason


ACCOUNT_HEALTH = """#!/usr/bin/env python3
import json
print(json.dumps({
    "ok_to_launch": False,
    "summary": "1 of 2 accounts can take work",
    "recommended_parallel_jobs": 4,
    "accounts": [
        {"label": "account1", "status": "ready", "available_slots": 4, "reasons": []},
        {"label": "account2", "status": "token_low", "available_slots": 0, "reasons": ["token<90m"]},
    ],
}))
"""


async def test_accounts_says_when_csb_has_no_health_script_and_shows_its_verdict(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        assert "no `scripts/infra/account_health.py`" in h.ephemeral_texts(REQUESTER)[-1]
        script = h.repo / "scripts" / "infra" / "account_health.py"
        script.parent.mkdir(parents=True)
        script.write_text(ACCOUNT_HEALTH)
        await h.driver.slash_command(REQUESTER, "accounts")
        await h.deliver()
        reply = h.ephemeral_texts(REQUESTER)[-1]
        assert "not ok to launch" in reply and "Recommended parallel: 4" in reply
        assert "`account2` token_low, 0 free slots (token&lt;90m)" in reply  # escaped: Slack shows `<`


async def test_a_dry_run_too_long_for_one_reply_comes_in_ordered_whole_parts(tmp_path: Path) -> None:
    model = "anthropic/claude-" + "x" * 180  # near the 200-character limit: four lane commands overflow
    async with running_bot(tmp_path) as h:
        response = await h.driver.slash_command(REQUESTER, f"run csb_sdlc_fix --model {model} --dry-run")
        assert response.status == 200
        await h.deliver()
        parts = h.ephemeral_texts(REQUESTER)
        assert len(parts) > 1, parts
        assert all(len(part) <= MAX_SECTION_TEXT for part in parts)
        assert parts[0].startswith("*Dry run*") and "*Preflight*" in parts[-1]  # in order
        lines = "\n".join(parts).splitlines()
        commands = [line for line in lines if line.startswith("`BASELINE_MCP_TYPE=")]
        assert len(commands) == 4 and all(model in line and line.endswith("`") for line in commands)  # whole
        assert "SOURCEGRAPH_ACCESS_TOKEN is set" in parts[-1] and "account_health.py" in lines[-1]
        assert await request_count(h.bot.store) == 0


async def test_refused_clicks_cannot_push_a_later_cancel_out_of_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty refused clicks, then an approval and a cancel: `/csb audit` shows the decisions first,
    the refusals after them, once per kind with a count."""
    script(tmp_path, monkeypatch, {task: "hang" for task in (SLUG, PAGE, MERGE)})
    async with bot(tmp_path, config_text=STAGING_APPROVER_ONLY) as h:
        card = await request_card(h)
        for _ in range(20):
            await h.driver.click_button(OUTSIDER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.bot.engine.tick()
        await h.driver.slash_command(REQUESTER, "cancel 1 the wrong suite after all")
        await h.deliver()
        await h.driver.slash_command(REQUESTER, "audit 1")
        await h.deliver()
        audit = h.ephemeral_texts(REQUESTER)[-1]
        await kill_all(h.bot.engine, h.bot.store)
    assert "*cancel requested*" in audit and "the wrong suite after all" in audit, audit
    assert audit.index("*approved*") < audit.index("*cancel requested*") < audit.index("*Refused* (20")
    assert audit.count("*refused approve*") == 1 and "(20 times, first" in audit
    assert "not shown" not in audit
