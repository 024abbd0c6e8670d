"""End to end: an approval covers exactly the revision on the card that was clicked, and whoever edits
a request is held to the requester's rules for what they made of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, Harness, running_bot
from store_reads import all_runs, audit_actions
from test_e2e_gate import click, prefilled_values
from test_e2e_run import card_text, request_card

from bot.playground import ADMIN, APPROVER, REQUESTER

pytestmark = pytest.mark.slow

ONE_OFFICIAL_APPROVAL = f"""
[policy]
admins = ["{ADMIN}"]

[policy.official]
approvals_required = 1
self_approval = false

[policy.official.approvers]
users = ["{APPROVER}", "{ADMIN}"]
"""


async def edit(h: Harness, user: str, card: dict[str, Any], **changes: str) -> dict[str, Any]:
    """Click Edit, change the named fields (text inputs by value, selects by option) and save."""
    await h.driver.click_button(user, CHANNEL, card["ts"], "Edit")
    await h.deliver()
    (view_id,) = h.standin.views
    values = prefilled_values(h.standin.views[view_id])
    for field, value in changes.items():
        state = values[f"edit.{field}"]["value"]
        if "selected_option" in state:
            state["selected_option"] = {"value": value, "text": {"type": "plain_text", "text": value}}
        else:
            state["value"] = value
    response = await h.driver.submit_view(user, view_id, values)
    assert response.status == 200
    await h.deliver()
    h.standin.views.pop(view_id, None)
    current = h.standin.message(CHANNEL, card["ts"])
    assert current is not None
    return current


async def test_a_click_on_an_older_revision_of_the_card_approves_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 4")
        card = await edit(h, REQUESTER, card, parallel="8")
        assert "revision 2" in card_text(card)
        # The approver's client still shows revision 1 (an update can arrive late): its button says so.
        await h.driver.click(APPROVER, CHANNEL, card["ts"], "approval.approve", value="1:1")
        await h.deliver()
        (reply,) = h.ephemeral_texts(APPROVER)
        assert "This card is out of date; request #1 is now revision 2" in reply
        assert len(await all_runs(h.bot.store)) == 0
        card = await click(h, APPROVER, card, "Approve")  # the current card counts
        assert len(await all_runs(h.bot.store)) == 1
        assert "Approved" in card_text(card)


async def test_an_approver_who_edits_into_official_may_not_approve_it_alone(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=ONE_OFFICIAL_APPROVAL) as h:
        card = await request_card(h)  # alice's staging request
        card = await edit(h, APPROVER, card, category="official")
        assert f"Edited by <@{APPROVER}>" in card_text(card)  # the card names the last editor
        card = await click(h, APPROVER, card, "Approve")
        (refusal,) = h.ephemeral_texts(APPROVER)
        assert "you edited this official request, so you count as its requester" in refusal
        assert len(await all_runs(h.bot.store)) == 0
        await click(h, ADMIN, card, "Approve")  # a second person sees it and approves
        assert len(await all_runs(h.bot.store)) == 1
        assert (await audit_actions(h.bot.store))[-2:] == ["approval", "approved"]


OFFICIAL_ONLY_FOR_CAROL = f"""
[policy.official.requesters]
users = ["{ADMIN}"]

[policy.official.approvers]
users = ["{APPROVER}"]
"""


async def test_an_edit_cannot_make_a_run_its_editor_may_not_request(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_ONLY_FOR_CAROL) as h:
        card = await request_card(h)
        card = await edit(h, REQUESTER, card, category="official")
        (refusal,) = h.ephemeral_texts(REQUESTER)
        assert (
            "your edit was not saved" in refusal and f"only <@{ADMIN}> may request official runs" in refusal
        )
        assert "revision 1" in card_text(card) and "`staging`" in card_text(card)
        assert (await audit_actions(h.bot.store)) == ["requested", "refused edit"]
