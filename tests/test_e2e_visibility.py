"""End to end: `/csb status` and `/csb audit` show a run's details only in its own channel or to its
requester, approvers and admins; anyone else, elsewhere, gets one line without parameters."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import CHANNEL, running_bot
from test_e2e_gate import click
from test_e2e_run import request_card

from bot.playground import ADMIN, APPROVER, OUTSIDER, REQUESTER

pytestmark = pytest.mark.slow

PRIVATE = "G0SECRET"
POLICY = f"""
[policy]
admins = ["{ADMIN}"]

[policy.staging.approvers]
users = ["{APPROVER}"]
"""


async def test_details_stay_in_the_channel_and_with_the_people_of_the_run(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        h.standin.add_channel(PRIVATE, "secret-project", bot_member=True)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --model anthropic/secret-model", PRIVATE)
        await h.deliver()
        (card,) = h.standin.messages(PRIVATE)
        await h.driver.click_button(APPROVER, PRIVATE, card["ts"], "Approve")
        await h.deliver()
        await request_card(h)  # a second run, requested in the public channel
        await click(h, APPROVER, h.last_card(), "Approve")

        for text in ("status", "status 1", "audit 1"):  # an outsider, in the public channel
            await h.driver.slash_command(OUTSIDER, text, CHANNEL)
            await h.deliver()
        listing, one, trail = h.ephemeral_texts(OUTSIDER)
        assert "• #1 queued (details in its channel)" in listing
        assert "#2 queued" in listing and "lanes done" in listing  # the public run in full
        assert one == (
            "Run #1 is queued; its details are shown only in its channel or to its requester, "
            "approvers and admins."
        )
        assert trail.startswith("Request #1 is approved; its audit trail is shown only")
        assert not h.standin.ephemerals(OUTSIDER)[1].get("blocks")  # no card copy
        for reply in (listing, one, trail):
            assert "secret-model" not in reply and "runs/" not in reply.split("#2")[0]

        for user, channel in (
            (REQUESTER, CHANNEL),
            (APPROVER, CHANNEL),
            (ADMIN, CHANNEL),
            (OUTSIDER, PRIVATE),
        ):
            await h.driver.slash_command(user, "audit 1", channel)
            await h.deliver()
            assert "*requested*" in h.ephemeral_texts(user)[-1], (user, channel)
