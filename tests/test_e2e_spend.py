"""Estimates, budgets and `/csb spend` end to end on the example bench, through the Slack stand-in.

The bench's Harbor stand-in records small deterministic costs per task, lane and model, so the figures
below are exact: a paired `csb_sdlc_fix` run (3 tasks, 6 lanes) of the default model costs COST."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import CHANNEL, Harness, running_bot
from test_e2e_compare import png_size
from test_e2e_run import card_text, labels, request_card

from bot.playground.users import ADMIN, APPROVER, REQUESTER

pytestmark = pytest.mark.slow


async def _ask(h: Harness, text: str, user: str = REQUESTER) -> str:
    before = len(h.ephemeral_texts(user))
    await h.driver.slash_command(user, text)
    await h.deliver()
    return "\n".join(h.ephemeral_texts(user)[before:])


async def _approve(h: Harness, user: str, card: dict) -> str:  # type: ignore[type-arg]
    before = len(h.ephemeral_texts(user))
    await h.driver.click_button(user, CHANNEL, card["ts"], "Approve")
    await h.deliver()
    return "\n".join(h.ephemeral_texts(user)[before:])


def _card(h: Harness, card: dict) -> dict:  # type: ignore[type-arg]
    current = h.standin.message(CHANNEL, card["ts"])
    assert current is not None
    return current


BUDGET = """
[policy.staging.approvers]
users = ["U0BOB", "U0CAROL"]

[policy.staging.override_approvers]
users = ["U0CAROL"]

[policy.staging.budget]
monthly_usd = {dollars}
"""
COST = "$4.54"  # a paired csb_sdlc_fix run: baseline $2.35, MCP $2.19
ESTIMATE = (
    ":bar_chart: *Estimate* (median, p10–p90 in brackets): $1.61 ($1.29–$1.70) per task, $4.84 ($3.87–$5.09) "
    "for 3 tasks; about 0 s (0 s–0 s) on 6 slots. From 6 finished lanes of the same suite, config and model."
)


async def test_estimates_rest_on_finished_lanes_and_spend_is_summed_and_charted(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        assert ":bar_chart: *Estimate*: no history (no finished lane of these suites yet)." in card_text(card)
        await _approve(h, APPROVER, card)
        await h.run_lanes()
        report = card_text(h.thread(_card(h, card))[-1])
        assert f"*Estimate vs actual*: estimated nothing (no history); actual {COST}, 0 s." in report

        assert ESTIMATE in await _ask(h, "run csb_sdlc_fix --dry-run")  # as the card would show it
        card = await request_card(h)
        assert ESTIMATE in card_text(card)
        await _approve(h, APPROVER, card)
        await h.run_lanes()
        report = card_text(h.thread(_card(h, card))[-1])
        assert (
            "*Estimate vs actual*: estimated $4.84 ($3.87–$5.09), about 0 s (0 s–0 s) (p10–p90 in brackets); "
            f"actual {COST}, 0 s." in report
        )

        assert await _ask(h, "spend") == "\n".join(
            [
                "*Spend in 2026-01* (UTC, lanes that finished in the month): $9.08 over 12 lanes",
                "*By category*",
                "  `staging`  $9.08  (12 lanes)",
                "*By model*",
                "  `anthropic/claude-haiku-4-5-20251001`  $9.08  (12 lanes)",
                "*By suite*",
                "  `csb_sdlc_fix`  $9.08  (12 lanes)",
                "*By config*",
                "  `baseline-local-direct`  $4.70  (6 lanes)",
                "  `mcp-remote-direct`  $4.38  (6 lanes)",
            ]
        )
        (chart,) = [f for f in h.standin.files.shared() if f.filename == "spend-2026-01.png"]
        assert chart.content is not None and png_size(chart.content) == (960, 720)
        assert chart.extra["alt_txt"].startswith(
            "Recorded lane cost in 2026-01 (UTC), $9.08 in all. category: "
        )
        (data,) = [f for f in h.standin.files.shared() if f.filename == "spend-2026-01.csv"]
        assert data.content is not None
        rows = data.content.decode().splitlines()
        assert rows[0] == "month,dimension,name,lanes,lanes_with_cost,cost_usd"
        assert rows[1] == "2026-01,category,staging,12,12,9.0778"

        assert await _ask(h, "spend 2025-12") == (
            "*Spend in 2025-12* (UTC, lanes that finished in the month): no lane finished in 2025-12."
        )
        assert (
            len([f for f in h.standin.files.shared() if f.filename.startswith("spend-")]) == 2
        )  # none drawn
        for text, words in (
            ("spend 2026-13", "`2026-13` is not a month: write it as YYYY-MM, e.g. 2026-03"),
            ("spend january", "`january` is not a month: write it as YYYY-MM, e.g. 2026-03"),
            ("spend 2026-01 2026-02", "expected one month as YYYY-MM, got 2 words"),
        ):
            reply = await _ask(h, text)
            assert words in reply and "/csb spend [YYYY-MM]" in reply, reply


async def test_a_card_warns_then_blocks_and_only_an_override_approver_passes_the_budget(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=BUDGET.format(dollars=12)) as h:
        first = await request_card(h)
        assert "Budget: staging runs have spent $0.00 of $12.00 in 2026-01 (UTC)" in card_text(first)
        await _approve(h, APPROVER, first)
        await h.run_lanes()  # the month has spent $4.54

        second, third = await request_card(h), await request_card(h)
        warning = (
            ":warning: *Budget*: staging runs have spent $4.54 of $12.00 in 2026-01 (UTC); with this run's "
            "estimate $9.38, past the warning line of $6.00."
        )
        assert warning in card_text(second) and warning in card_text(third)
        assert labels(third) == ["Approve", "Reject", "Edit"]
        assert await _approve(h, APPROVER, second) == ""  # a warning does not stop anyone
        await h.run_lanes()  # $9.08 spent

        # #3's card was drawn at $4.54: the click is judged by the month as it is now.
        refused = await _approve(h, APPROVER, third)
        assert (
            "this request is past its monthly budget's block line; only <@U0CAROL> may approve it" in refused
        )
        over = (
            ":rotating_light: *OVER BUDGET*: staging runs have spent $9.08 of $12.00 in 2026-01 (UTC); "
            "with this run's estimate $13.92, past the block line of $12.00. Approve needs an approver "
            "allowed for overrides, and is recorded in the audit."
        )
        assert over in card_text(_card(h, third))
        assert await _approve(h, ADMIN, third) == ""
        shown = card_text(_card(h, third))
        assert (
            ":rotating_light: *BUDGET OVERRIDE*: approved past the monthly budget's block line by "
            "<@U0CAROL>; the budget does not drain this run." in shown
        )
        audit = await _ask(h, "audit 3")
        assert "1 of 1; budget override" in audit, audit
        await h.run_lanes()  # past the block line, yet the overridden run is not drained
        thread = "\n".join(card_text(m) for m in h.thread(_card(h, third)))
        assert "Over budget" not in thread and "3 complete pairs" in thread

        fourth = await request_card(h)
        assert "*OVER BUDGET*: staging runs have spent $13.62 of $12.00" in card_text(fourth)
        spend = await _ask(h, "spend")
        assert "  `staging`  $13.62  (18 lanes) of a $12.00 budget, 113 %" in spend


async def test_a_run_that_crosses_the_block_line_drains_and_says_so(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=BUDGET.format(dollars=0.01)) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 2")  # one pair at a time
        await _approve(h, APPROVER, card)
        await h.run_lanes()
        # A milestone ("33 % done") comes too when both lanes of the first pair end in one tick.
        texts = [card_text(m) for m in h.thread(_card(h, card))]
        first, over, report = [text for text in texts if not text.startswith(":bar_chart:")]
        assert first == ":arrow_forward: Run #1 started."
        # The drain comes in the tick that settles the first lane to end: either lane of the first pair,
        # or both when they end in one tick (then no lane is left running).
        spent = re.fullmatch(
            r":double_vertical_bar: \*Over budget\*: `staging` runs have spent \$(0\.84|0\.78|1\.61) in "
            r"2026-01, past the block line of \$0\.01 \(budget \$0\.01\), so the bot is draining run #1\. No "
            r"new pairs start \(4 queued lanes dropped\); (1 running lane finishes|0 running lanes finish)\.",
            over,
        )
        assert spent is not None, over
        assert (
            f":octagonal_sign: *Cancelled*: monthly budget: category staging spent ${spent.group(1)} in "
            "2026-01, past its block line of $0.01." in report
        )
        assert "1 complete pair" in report and "*2 tasks not run*" in report  # the running lane finished
        assert "drain requested" in await _ask(h, "audit 1")
        assert "$1.61 over 2 lanes\n" in await _ask(h, "spend")  # the lanes dropped spent nothing
