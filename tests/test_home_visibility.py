"""App Home sits in no channel: it lists only what `/csb status` typed outside a request's channel would
show, and no button (on App Home, a card, a copy) lets someone act on a request they may not see from
where they click. The outsider here may approve staging runs (`anyone`), yet is in no private channel."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness import Harness, running_bot
from test_e2e_run import card_text, labels

from bot.playground import ADMIN, OUTSIDER, REQUESTER
from bot.store import requests
from bot.store.models import RequestState

pytestmark = pytest.mark.slow

PRIVATE = "G0SECRET"
POLICY = f"""
[policy]
admins = ["{ADMIN}"]
"""  # staging keeps its default: anyone may approve


async def _state(h: Harness, request_id: int) -> RequestState:
    async with h.bot.store.read() as session:
        request = await requests.get_request(session, request_id)
    assert request is not None
    return request.state


async def test_app_home_shows_and_acts_only_as_status_would(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=POLICY) as h:
        h.standin.add_channel(PRIVATE, "secret-project", bot_member=True)
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --model anthropic/secret-model", PRIVATE)
        await h.deliver()
        (card,) = h.standin.messages(PRIVATE)

        await h.driver.app_home_opened(OUTSIDER)
        await h.driver.app_home_opened(ADMIN)
        await h.deliver()
        outsider_home = card_text(h.standin.home(OUTSIDER) or {})
        assert "secret-model" not in outsider_home and "Nothing right now" in outsider_home
        assert labels(h.standin.home(OUTSIDER) or {}) == []
        assert "secret-model" in card_text(h.standin.home(ADMIN) or {})  # an admin may see it anywhere

        # The admin's tab holds the buttons; the outsider clicks them as Slack would send the click.
        admin_view = h.standin.home(ADMIN)
        assert admin_view is not None and labels(admin_view)[:2] == ["Approve", "Reject"]
        h.standin.surfaces.publish(OUTSIDER, admin_view, None)  # the same buttons, on the outsider's tab
        for label in ("Approve", "Reject"):
            await h.driver.click_home_button(OUTSIDER, label)
            await h.deliver()
        assert await _state(h, 1) is RequestState.PENDING
        refusals = h.ephemeral_texts(OUTSIDER)
        assert refusals and all("shown only in its channel" in text for text in refusals), refusals
        assert h.standin.calls_to("views.open") == []  # no reject modal opened for them

        # The rule is where the click comes from: on the card, in its channel, the same person may act.
        await h.driver.click_button(OUTSIDER, PRIVATE, card["ts"], "Approve")
        await h.deliver()
        assert await _state(h, 1) is RequestState.APPROVED
