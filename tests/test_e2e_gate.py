"""End to end through the Slack stand-in: every rule of the approval gate, clicked as people click."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from harness import CHANNEL, ROOT, Harness, running_bot
from lane_waits import running_count
from sqlalchemy import select
from store_reads import all_runs, audit_actions
from test_e2e_run import card_text, labels, reject_with_reason, request_card

from bot.playground import ADMIN, APPROVER, OUTSIDER, REQUESTER
from bot.store import audit
from bot.store.models import AuditEvent, Lane

pytestmark = pytest.mark.slow

OFFICIAL_TWO_APPROVERS = f"""
[policy]
admins = ["{ADMIN}"]

[policy.official]
approvals_required = 2
self_approval = false
remind_after_minutes = 60

[policy.official.approvers]
users = ["{APPROVER}", "{ADMIN}", "{REQUESTER}"]

[policy.official.override_approvers]
users = ["{ADMIN}"]
"""


async def refusals(h: Harness) -> list[tuple[str, str]]:
    async with h.bot.store.read() as session:
        rows = await session.execute(
            select(AuditEvent.actor, AuditEvent.reason)
            .where(AuditEvent.action.startswith("refused "))
            .order_by(AuditEvent.id)
        )
        return [(actor, reason or "") for actor, reason in rows.all()]


async def runs_count(h: Harness) -> int:
    return len(await all_runs(h.bot.store))


async def gate_tick(h: Harness) -> None:
    """What the timers do after time passed: the engine renews the lease, then expiry and reminders run."""
    await h.bot.engine.tick()
    await h.bot.gate_tick()


async def click(h: Harness, user: str, card: dict[str, Any], label: str) -> dict[str, Any]:
    await h.driver.click_button(user, CHANNEL, card["ts"], label)
    await h.deliver()
    current = h.standin.message(CHANNEL, card["ts"])
    assert current is not None
    return current


async def test_official_self_approval_and_outsiders_are_refused_naming_who_may(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        card = await click(h, REQUESTER, card, "Approve")
        card = await click(h, OUTSIDER, card, "Approve")
        own, outsider = h.ephemeral_texts()
        assert "the requester may not approve their own request" in own
        assert f"<@{APPROVER}>" in outsider and "may approve official runs" in outsider
        assert "Approvals: 0 of 2 (none yet)" in card_text(card)  # no approval counted
        assert labels(card) == ["Approve", "Reject", "Edit"]
        assert (await runs_count(h)) == 0
        assert (await audit_actions(h.bot.store)) == ["requested", "refused approve", "refused approve"]
        assert (await refusals(h)) == [
            (
                REQUESTER,
                "you requested this official run, and the requester may not approve their own request",
            ),
            (OUTSIDER, f"only <@{APPROVER}>, <@{ADMIN}> or <@{REQUESTER}> may approve official runs"),
        ]  # who, what and why; the outsider is not told the requester's rule


LEADS_APPROVE_OFFICIAL = """
[policy.official]
self_approval = false

[policy.official.approvers]
usergroups = ["S0LEADS"]
"""


async def test_user_group_members_approve_others_are_told_the_group(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=LEADS_APPROVE_OFFICIAL) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        card = await click(h, APPROVER, card, "Approve")  # not in the group
        (refusal,) = h.ephemeral_texts(APPROVER)
        assert "members of <!subteam^S0LEADS>" in refusal
        assert (await runs_count(h)) == 0
        card = await click(h, ADMIN, card, "Approve")  # a member of S0LEADS in the workspace
        assert f"Approved* by <@{ADMIN}>" in card_text(card)
        assert (await runs_count(h)) == 1
        assert h.standin.calls_to("usergroups.list")  # membership came from Slack, not the config
        assert (await audit_actions(h.bot.store)) == ["requested", "refused approve", "approval", "approved"]


async def test_shipped_official_policy_fails_closed(tmp_path: Path, db_url: str) -> None:
    shipped = (ROOT / "configs" / "csb-bot.toml").read_text()
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=shipped) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        await click(h, APPROVER, card, "Approve")
        (reply,) = h.ephemeral_texts(APPROVER)
        assert "no one is listed as an approver for official runs" in reply
        assert (await runs_count(h)) == 0


async def test_two_of_three_approvals_then_launch(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        card = await click(h, APPROVER, card, "Approve")
        assert f"Approvals: 1 of 2 (<@{APPROVER}>)" in card_text(card)
        card = await click(h, APPROVER, card, "Approve")
        assert "already approved" in h.ephemeral_texts(APPROVER)[-1]
        assert (await runs_count(h)) == 0
        card = await click(h, ADMIN, card, "Approve")
        assert f"Approved* by <@{APPROVER}>, <@{ADMIN}>" in card_text(card)
        assert labels(card) == ["Cancel"]
        assert (await runs_count(h)) == 1
        assert (await audit_actions(h.bot.store)) == [
            "requested",
            "approval",
            "refused approve",
            "approval",
            "approved",
        ]


async def test_edit_makes_a_new_revision_and_voids_approvals(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official --parallel 4")
        card = await click(h, APPROVER, card, "Approve")
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")
        await h.deliver()
        (view_id,) = h.standin.views
        modal = h.standin.views[view_id]
        assert {b["block_id"] for b in modal["blocks"]} >= {"edit.model", "edit.suite", "edit.parallel"}
        values = prefilled_values(modal)
        values["edit.parallel"]["value"]["value"] = "8"
        assert (await h.driver.submit_view(REQUESTER, view_id, values)).status == 200
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        shown = card_text(card)
        assert "revision 2" in shown and "parallel: 4 → 8" in shown and "8 slots" in shown
        assert "Approvals: 1 of 2" not in shown
        card = await click(h, ADMIN, card, "Approve")
        assert f"Approvals: 1 of 2 (<@{ADMIN}>)" in card_text(card)
        assert (await runs_count(h)) == 0
        assert (await audit_actions(h.bot.store)) == ["requested", "approval", "edited", "approval"]


async def test_edit_with_a_bad_value_keeps_the_modal_open_with_the_error(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        await h.driver.click_button(REQUESTER, CHANNEL, card["ts"], "Edit")
        await h.deliver()
        (view_id,) = h.standin.views
        values = prefilled_values(h.standin.views[view_id])
        values["edit.suite"]["value"]["value"] = "csb_sdlc_nope"
        response = await h.driver.submit_view(REQUESTER, view_id, values)
        assert response.json is not None and response.json["response_action"] == "errors"
        assert "csb_sdlc_fix" in response.json["errors"]["edit.suite"]
        assert view_id in h.standin.views  # still open
        assert (await audit_actions(h.bot.store)) == ["requested"]


def prefilled_values(modal: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What Slack would submit for an untouched modal: each input's initial value."""
    values: dict[str, dict[str, Any]] = {}
    for block in modal["blocks"]:
        element = block["element"]
        state: dict[str, Any] = {"type": element["type"]}
        if "initial_option" in element:
            state["selected_option"] = element["initial_option"]
        elif element["type"] == "checkboxes":
            state["selected_options"] = element.get("initial_options", [])
        else:
            state["value"] = element.get("initial_value")
        values[block["block_id"]] = {element["action_id"]: state}
    return values


async def test_expired_request_says_expired_and_cannot_be_approved(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        h.clock.advance(timedelta(hours=23))
        await gate_tick(h)
        h.clock.advance(timedelta(hours=1, seconds=1))
        await gate_tick(h)
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        assert "EXPIRED" in card_text(card) and labels(card) == []
        await h.driver.click(APPROVER, CHANNEL, card["ts"], "approval.approve", value="1:1")
        await h.deliver()
        assert "already expired" in h.ephemeral_texts(APPROVER)[-1]
        assert (await runs_count(h)) == 0
        assert (await audit_actions(h.bot.store)) == ["requested", "expired", "refused approve"]


async def test_reminder_goes_to_the_thread_once_per_interval(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        h.clock.advance(timedelta(minutes=59))
        await gate_tick(h)
        await h.deliver()
        assert h.thread(card) == []
        h.clock.advance(timedelta(minutes=2))
        await gate_tick(h)
        await gate_tick(h)
        await h.deliver()
        (reminder,) = h.thread(card)
        assert "still waiting for approval" in card_text(reminder) and f"<@{APPROVER}>" in card_text(reminder)


async def test_drifted_suite_file_voids_the_approval(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        suite_file = h.repo / "benchmarks" / "suites" / "csb-example.json"
        data = json.loads(suite_file.read_text())
        data["description"] += " (edited after the request)"
        suite_file.write_text(json.dumps(data, indent=2))
        card = await click(h, APPROVER, card, "Approve")
        assert "changed since this was requested" in h.ephemeral_texts(APPROVER)[-1]
        assert "approvals are void" in card_text(card) and labels(card) == []
        assert (await runs_count(h)) == 0
        assert (await audit_actions(h.bot.store)) == ["requested", "voided", "refused approve"]


async def lane_states(h: Harness) -> list[str]:
    async with h.bot.store.read() as session:
        return [state.value for state in (await session.execute(select(Lane.state))).scalars()]


async def test_suite_file_drifted_while_queued_voids_the_run_before_any_lane(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await click(h, APPROVER, await request_card(h), "Approve")
        assert "Queued" in card_text(card) and (await runs_count(h)) == 1  # approved, no tick yet
        suite_file = h.repo / "benchmarks" / "suites" / "csb-example.json"
        data = json.loads(suite_file.read_text())
        data["tasks"] = data["tasks"][1:]  # a task dropped while the run waited in the queue
        suite_file.write_text(json.dumps(data, indent=2))

        await h.bot.engine.tick()
        await h.deliver()
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None
        assert "Cancelled" in card_text(card) and "approval is void" in card_text(card)
        assert "0/3 pairs done · 0 lanes running · 0 queued · 6 cancelled" in card_text(card)
        assert labels(card) == []
        (notice,) = h.thread(card)
        assert "did not start" in card_text(notice) and "0 tasks added and 1 removed" in card_text(notice)
        assert running_count(h.bot.engine.executor) == 0
        assert set(await lane_states(h)) == {"cancelled"}
        assert (await audit_actions(h.bot.store)) == ["requested", "approval", "approved", "voided"]

        await h.run_lanes()  # later ticks neither start nor void it again
        assert set(await lane_states(h)) == {"cancelled"}
        assert (await audit_actions(h.bot.store)) == ["requested", "approval", "approved", "voided"]


async def test_unchanged_suite_file_launches_the_queued_run(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await click(h, APPROVER, await request_card(h), "Approve")
        suite_file = h.repo / "benchmarks" / "suites" / "csb-example.json"
        suite_file.write_bytes(suite_file.read_bytes())  # touched, same content: no drift
        await h.bot.engine.tick()
        await h.deliver()
        assert "running" in await lane_states(h)  # claimed and started (a short lane may have ended since)
        assert "Running" in card_text(h.standin.message(CHANNEL, card["ts"]) or {})
        await h.run_lanes()
        assert (await audit_actions(h.bot.store))[-2:] == ["launched", "finished"]
        assert "voided" not in (await audit_actions(h.bot.store))


async def test_single_lane_run_refused_without_counterparts_then_allowed_with_them(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --baseline-only")
        shown = card_text(card)
        assert "No clean counterpart result for 3 tasks" in shown
        for task in (
            "slugify-punctuation-fix-001",
            "pagination-offset-fix-001",
            "config-merge-nested-fix-001",
        ):
            assert task in shown
        assert labels(card) == ["Reject", "Edit"]
        await h.driver.click(APPROVER, CHANNEL, card["ts"], "approval.approve", value="1:1")
        await h.deliver()
        assert "Approve is refused" in h.ephemeral_texts(APPROVER)[-1]

        paired = await request_card(h, "run csb_sdlc_fix")
        await click(h, APPROVER, paired, "Approve")
        await h.run_lanes()  # leaves clean MCP results for every task
        again = await request_card(h, "run csb_sdlc_fix --baseline-only")
        assert "No clean counterpart" not in card_text(again)
        assert labels(again) == ["Approve", "Reject", "Edit"]


async def test_unpaired_override_is_loud_needs_an_override_approver_and_is_recorded(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --full-only --allow-unpaired --category official")
        assert "UNPAIRED OVERRIDE" in card_text(card)
        assert labels(card) == ["Approve", "Reject", "Edit"]
        card = await click(h, APPROVER, card, "Approve")
        assert "only <@U0CAROL> may approve it" in h.ephemeral_texts(APPROVER)[-1]
        card = await click(h, ADMIN, card, "Approve")
        async with h.bot.store.read() as session:
            events = await audit.events_for(session, 1)
        assert [event.reason for event in events if event.action == "approval"] == [
            "1 of 2; unpaired override"
        ]


async def test_unauthorised_reject_and_edit_are_refused(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=OFFICIAL_TWO_APPROVERS) as h:
        card = await request_card(h, "run csb_sdlc_fix --category official")
        await click(h, OUTSIDER, card, "Edit")
        await click(h, OUTSIDER, card, "Reject")
        edit, reject = h.ephemeral_texts(OUTSIDER)
        assert "may edit official runs" in edit and "may reject official runs" in reject
        assert h.standin.views == {}
        await reject_with_reason(h, ADMIN, card, "duplicate of another request")
        card = h.standin.message(CHANNEL, card["ts"])
        assert card is not None and "duplicate of another request" in card_text(card)
        assert (await audit_actions(h.bot.store)) == [
            "requested",
            "refused edit",
            "refused reject",
            "rejected",
        ]


async def test_fifty_concurrent_approve_clicks_launch_once(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        users = [APPROVER, ADMIN, OUTSIDER, REQUESTER]
        clicks = [h.driver.click_button(users[i % 4], CHANNEL, card["ts"], "Approve") for i in range(50)]
        assert {r.status for r in await asyncio.gather(*clicks)} == {200}
        await h.deliver()
        assert (await runs_count(h)) == 1
        actions = await audit_actions(h.bot.store)
        assert actions.count("approved") == 1 and actions.count("approval") == 1
        assert len(h.ephemeral_texts()) == 49
