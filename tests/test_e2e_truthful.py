"""End to end, what the bot shows is what happened and what was typed: no live mention or link from a
user's text, a cancelled run's report says cancelled, every errored lane names its reason, the DM
links the thread and reruns from there, a rerun card says what it reruns, a skipped check says so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import CHANNEL, Harness
from idle import run_until_idle
from store_reads import all_runs
from summary_check import assert_summary_true
from test_e2e_run import card_text, labels
from test_run_control import approved_run, bot, script, thread_texts

from bot.playground import APPROVER, REQUESTER

pytestmark = pytest.mark.slow

SLUG, PAGE, MERGE = "slugify-punctuation-fix-001", "pagination-offset-fix-001", "config-merge-nested-fix-001"
HOSTILE = "<!channel> <https://x|Click here to approve>"
ESCAPED = "&lt;!channel&gt; &lt;https://x|Click here to approve&gt;"
NO_RETRY = "[engine]\nretry_limit = 0\ninfra_pause_min_attempts = 100\n"


def everything_posted(h: Harness) -> str:
    """Every text the channel, its threads and the ephemerals carry, as Slack received it."""
    calls = [c.args for c in h.standin.calls_to("chat.postMessage") + h.standin.calls_to("chat.update")]
    parts = [str(args.get("text", "")) + str(args.get("blocks", "")) for args in calls]
    return "\n".join(parts + h.ephemeral_texts())


async def test_a_hostile_model_and_reason_show_as_typed_and_the_card_flags_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    async with bot(tmp_path) as h:
        # One at a time: their replies are read in order, and two commands' work may finish either way.
        for text in (f'run csb_sdlc_fix --model "{HOSTILE}"', f'run "{HOSTILE}"', "help"):
            await h.driver.slash_command(REQUESTER, text)  # the second: an unknown suite, echoed back
            await h.deliver()
        card = h.last_card()
        shown = card_text(card)
        assert f"`{ESCAPED}`" in shown
        assert "not of the form `&lt;provider&gt;/&lt;name&gt;`" in shown
        bad_suite, help_text = h.ephemeral_texts(REQUESTER)
        assert "&lt;!channel&gt;" in bad_suite
        assert "`/csb cancel &lt;run&gt; [--drain] &lt;reason&gt;`" in help_text

        await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")
        await h.deliver()
        await h.bot.engine.tick()
        await h.driver.slash_command(REQUESTER, f"cancel 1 {HOSTILE} wrong model")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"]) or {}
        assert f"Cancelled* by <@{REQUESTER}>: {ESCAPED} wrong model" in card_text(card)
        assert f"cancelled run #1: {ESCAPED} wrong model" in thread_texts(h, card)
        posted = everything_posted(h)
        assert "<!channel>" not in posted and "<https://x" not in posted

        report = h.thread(card)[-1]
        assert report["text"].startswith("Run #1 cancelled (csb_sdlc_fix)")
        assert "Run #1 report (cancelled): csb_sdlc_fix" in card_text(report)
        assert f"*Cancelled* by <@{REQUESTER}>: {ESCAPED} wrong model" in card_text(report)


async def test_errored_lanes_name_their_reason_and_the_report_its_whole_output_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {f"{SLUG}/mcp": "crash", f"{PAGE}/mcp": "error"})
    async with bot(tmp_path, config_text=NO_RETRY) as h:
        card = await approved_run(h)
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        report = card_text(h.thread(card)[-1])
        (run,) = await all_runs(h.bot.store)
        run_dir = run.run_dir
        assert f"output `runs/staging/{run_dir}`" in report
        crash = re.search(rf"`{SLUG}`  baseline \w+ [\d.]+ · MCP errored \((.*)\)", report)
        assert crash, report
        assert crash[1].startswith("harbor exited") and "without a trial result" in crash[1]
        assert (
            f"; log: runs/staging/{run_dir}/mcp-remote-direct/{SLUG}.log; it ends: harbor: crashed"
            in crash[1]
        )
        error = "MCP errored (NonZeroAgentExitCodeError: Agent command exited with non-zero exit code 1"
        assert error in report


async def test_rerun_from_the_dm_lands_in_the_channel_and_its_card_says_what_it_reruns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Docker failure: CSB's category A (rerun as is), which its catalog does not retry on its own.
    script(tmp_path, monkeypatch, {f"{PAGE}/mcp": "fp-docker_compose_fail"})
    async with bot(tmp_path) as h:
        card = await approved_run(h)
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        (dm,) = h.standin.messages("D0ALICE")
        assert labels(dm) == ["Rerun failed"]
        summed = await assert_summary_true(h.bot.store, 1)
        await h.driver.click_button(REQUESTER, "D0ALICE", dm["ts"], "Rerun failed")
        await h.deliver()
        rerun = h.last_card()
        assert rerun["ts"] != card["ts"] and "CSB run request #2" in card_text(rerun)
        # pagination's baseline failed, its MCP lane errored (category A); merge's genuine fail is not rerun
        assert "Rerun of #1: 1 failed, 1 errored lanes (1 task run again)" in card_text(rerun)
        # The rerun is a request of its own: run #1's summary, and what `/csb runs` shows of it, stay.
        assert await assert_summary_true(h.bot.store, 1) == summed
        assert h.standin.messages("D0ALICE") == [dm]  # nothing else went to the DM


async def test_a_check_that_did_not_run_shows_as_skipped_not_passed(tmp_path: Path) -> None:
    async with bot(tmp_path) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix")
        await h.deliver()
        preflight = card_text(h.last_card())
        skipped = [line for line in preflight.splitlines() if "account_health.py not present" in line]
        assert skipped == [":heavy_minus_sign: _skipped:_ scripts/infra/account_health.py not present"]
        assert ":white_check_mark: 3 tasks in suite csb_sdlc_fix" in preflight


@pytest.mark.parametrize(
    ("retry_limit", "promise"),
    [
        (0, r"; none is waiting for a retry: a lane past its retry limit ends as errored\."),
        (3, r"; [5-6] lanes are queued to be retried with backoff\."),
    ],
)
async def test_the_thread_says_retried_only_when_a_retry_is_scheduled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retry_limit: int, promise: str
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "crash", PAGE: "crash", MERGE: "crash"})
    config = f"[engine]\nretry_limit = {retry_limit}\ninfra_pause_min_attempts = 100\n"
    async with bot(tmp_path, config_text=config) as h:
        card = await approved_run(h, "run csb_sdlc_fix --parallel 6")
        await run_until_idle(h.bot.engine, h.bot.store)
        await h.deliver()
        thread = thread_texts(h, card)
        storms = [t for t in thread.splitlines() if "infrastructure failures" in t]
        if retry_limit == 0:
            # Every lane ended at once, so the report is the thread's last word and no storm note follows
            # it; whatever the thread says, it never promises a retry that is not scheduled.
            assert "retried" not in thread, thread
            assert all(re.search(promise + "$", storm) for storm in storms), storms
        else:
            (storm,) = storms
            assert re.search(promise + "$", storm), storm


async def test_the_first_run_of_its_kind_says_eta_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang", PAGE: "hang", MERGE: "hang"})
    async with bot(tmp_path) as h:
        card = await approved_run(h)
        assert "*Running*" in card_text(card) and "ETA unknown" in card_text(card)
        await h.driver.slash_command(REQUESTER, "cancel 1 enough")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)
