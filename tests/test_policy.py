"""Who may request, approve and control runs: shipped defaults, configured rules, refusal wording."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.domain.errors import PolicyError
from bot.domain.policy import (
    Actor,
    PolicyConfig,
    approvals_needed,
    expires_at,
    is_expired,
    max_parallel,
    may_approve,
    may_control,
    may_request,
    needs_usergroups,
    reminder_cutoffs,
    reminder_due,
)
from bot.domain.spec import Category
from bot.settings import BotConfig

ROOT = Path(__file__).resolve().parents[1]
STAGING, OFFICIAL = Category.STAGING, Category.OFFICIAL
ALICE, BOB, CAROL, DAVE = (
    Actor(user_id="U0ALICE"),
    Actor(user_id="U0BOB"),
    Actor(user_id="U0CAROL"),
    Actor(user_id="U0DAVE"),
)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _policy(**sections: object) -> PolicyConfig:
    return PolicyConfig.model_validate(sections)


CONFIGURED = _policy(
    admins=["U0CAROL"],
    official={
        "approvers": {"users": ["U0BOB"], "usergroups": ["S0LEADS"]},
        "override_approvers": {"users": ["U0BOB"]},
        "approvals_required": 2,
    },
)


# --- shipped defaults --------------------------------------------------------------------------------------


def test_staging_default_lets_anyone_request_and_approve_including_the_requester() -> None:
    policy = PolicyConfig()
    assert may_request(policy, STAGING, DAVE, "C0ANY").allowed
    verdict = may_approve(policy, STAGING, ALICE, requester="U0ALICE")
    assert verdict.allowed, verdict.reason
    assert approvals_needed(policy, STAGING) == 1
    assert not needs_usergroups(policy, STAGING)


def test_official_default_posts_the_card_but_fails_closed_on_approval() -> None:
    policy = PolicyConfig()
    assert may_request(policy, OFFICIAL, DAVE, "C0ANY").allowed
    verdict = may_approve(policy, OFFICIAL, BOB, requester="U0ALICE")
    assert not verdict.allowed
    assert verdict.reason == (
        "no one is listed as an approver for official runs, so it cannot be approved: "
        "ask an admin to add approvers in configs/csb-bot.toml"
    )
    assert approvals_needed(policy, OFFICIAL) == 1


def test_shipped_file_holds_exactly_the_defaults() -> None:
    config = BotConfig.model_validate(tomllib.loads((ROOT / "configs" / "csb-bot.toml").read_text()))
    assert config.policy == PolicyConfig()
    assert max_parallel(config.policy, STAGING) == 60
    assert max_parallel(config.policy, OFFICIAL) == 100


def test_playground_file_lists_its_admin_as_official_approver() -> None:
    config = BotConfig.model_validate(tomllib.loads((ROOT / "configs" / "playground.toml").read_text()))
    assert config.policy.admins == ("U0CAROL",)
    assert may_approve(config.policy, OFFICIAL, CAROL, requester="U0ALICE").allowed
    refused = may_approve(config.policy, OFFICIAL, BOB, requester="U0ALICE")
    assert refused.reason == "only <@U0CAROL> may approve official runs"  # no rule about requesters
    assert not may_approve(config.policy, OFFICIAL, CAROL, requester="U0CAROL").allowed
    shipped = BotConfig.model_validate(tomllib.loads((ROOT / "configs" / "csb-bot.toml").read_text()))
    assert config.engine == shipped.engine and config.notifier == shipped.notifier


# --- approving ---------------------------------------------------------------------------------------------


def test_listed_approver_and_group_member_may_approve_official() -> None:
    assert may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0ALICE").allowed
    lead = Actor(user_id="U0ERIN", usergroups=frozenset({"S0LEADS"}))
    verdict = may_approve(CONFIGURED, OFFICIAL, lead, requester="U0ALICE")
    assert verdict.allowed and verdict.reason == "member of <!subteam^S0LEADS>"
    assert needs_usergroups(CONFIGURED, OFFICIAL)


def test_refusal_names_who_may_approve() -> None:
    verdict = may_approve(CONFIGURED, OFFICIAL, DAVE, requester="U0ALICE")
    assert not verdict.allowed
    assert verdict.reason == "only <@U0BOB> or members of <!subteam^S0LEADS> may approve official runs"
    with pytest.raises(PolicyError, match="only <@U0BOB>"):
        verdict.require()


def test_requester_may_not_approve_own_official_request_even_when_listed() -> None:
    verdict = may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0BOB")
    assert not verdict.allowed
    assert "the requester may not approve their own request" in verdict.reason


def test_same_person_cannot_approve_twice() -> None:
    verdict = may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0ALICE", already_approved_by={"U0BOB"})
    assert not verdict.allowed
    assert (
        verdict.reason == "you have already approved this request; it needs 2 approvals from different people"
    )
    assert approvals_needed(CONFIGURED, OFFICIAL) == 2


def test_unpaired_override_needs_an_override_approver() -> None:
    lead = Actor(user_id="U0ERIN", usergroups=frozenset({"S0LEADS"}))
    refused = may_approve(CONFIGURED, OFFICIAL, lead, requester="U0ALICE", unpaired_override=True)
    assert not refused.allowed
    assert refused.reason == (
        "this request overrides the pairing rule (--allow-unpaired); only <@U0BOB> may approve it"
    )
    assert may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0ALICE", unpaired_override=True).allowed


def test_unpaired_override_fails_closed_when_no_one_may_approve_it() -> None:
    policy = _policy(admins=["U0CAROL"], official={"approvers": {"users": ["U0BOB"]}})
    verdict = may_approve(policy, OFFICIAL, BOB, requester="U0ALICE", unpaired_override=True)
    assert not verdict.allowed
    assert verdict.reason == (
        "this request overrides the pairing rule (--allow-unpaired) and no one may approve that for "
        "official runs: ask an admin (<@U0CAROL>) to add override_approvers in configs/csb-bot.toml"
    )


def test_staging_override_defaults_to_staging_approvers() -> None:
    policy = PolicyConfig()
    assert may_approve(policy, STAGING, DAVE, requester="U0ALICE", unpaired_override=True).allowed


def test_override_approver_must_also_be_an_approver() -> None:
    policy = _policy(
        official={"approvers": {"users": ["U0BOB"]}, "override_approvers": {"users": ["U0DAVE"]}}
    )
    assert not may_approve(policy, OFFICIAL, DAVE, requester="U0ALICE", unpaired_override=True).allowed


def test_self_approval_refused_when_anyone_may_approve_but_self_approval_is_off() -> None:
    policy = _policy(staging={"self_approval": False})
    verdict = may_approve(policy, STAGING, ALICE, requester="U0ALICE")
    assert verdict.reason == (
        "you requested this staging run, and the requester may not approve their own request"
    )
    assert may_approve(policy, STAGING, BOB, requester="U0ALICE").allowed


def test_an_editor_is_held_to_the_requester_rule_where_self_approval_is_off() -> None:
    verdict = may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0ALICE", editors={"U0BOB"})
    assert not verdict.allowed
    assert verdict.reason.startswith("you edited this official request, so you count as its requester")
    assert may_approve(CONFIGURED, OFFICIAL, BOB, requester="U0ALICE", editors={"U0DAVE"}).allowed
    assert may_approve(PolicyConfig(), STAGING, ALICE, requester="U0BOB", editors={"U0ALICE"}).allowed


# --- requesting --------------------------------------------------------------------------------------------


def test_requesters_limited_by_people_and_by_channel() -> None:
    policy = _policy(
        official={"requesters": {"users": ["U0ALICE"], "usergroups": ["S0RUN"], "channels": ["C0BENCH"]}}
    )
    assert may_request(policy, OFFICIAL, ALICE, "C0BENCH").allowed
    runner = Actor(user_id="U0ERIN", usergroups=frozenset({"S0RUN"}))
    assert may_request(policy, OFFICIAL, runner, "C0BENCH").allowed
    wrong_person = may_request(policy, OFFICIAL, DAVE, "C0BENCH")
    assert wrong_person.reason == "only <@U0ALICE> or members of <!subteam^S0RUN> may request official runs"
    wrong_place = may_request(policy, OFFICIAL, ALICE, "C0RANDOM")
    assert wrong_place.reason == "official runs may be requested only in <#C0BENCH>"
    assert may_request(policy, STAGING, DAVE, "C0RANDOM").allowed
    assert needs_usergroups(policy, OFFICIAL)


# --- controlling -------------------------------------------------------------------------------------------


def test_requester_approvers_and_admins_may_control() -> None:
    for actor in (ALICE, BOB, CAROL):
        assert may_control(CONFIGURED, OFFICIAL, actor, requester="U0ALICE").allowed, actor
    lead = Actor(user_id="U0ERIN", usergroups=frozenset({"S0LEADS"}))
    assert may_control(CONFIGURED, OFFICIAL, lead, requester="U0ALICE").allowed


def test_control_refusal_names_requester_approvers_and_admins() -> None:
    verdict = may_control(CONFIGURED, OFFICIAL, DAVE, requester="U0ALICE", action="cancel")
    assert not verdict.allowed
    assert verdict.reason == (
        "only the requester (<@U0ALICE>), official approvers (<@U0BOB> or members of <!subteam^S0LEADS>) "
        "or admins (<@U0CAROL>) may cancel official runs"
    )


def test_default_staging_lets_anyone_control_and_official_only_requester() -> None:
    policy = PolicyConfig()
    assert may_control(policy, STAGING, DAVE, requester="U0ALICE").allowed
    verdict = may_control(policy, OFFICIAL, DAVE, requester="U0ALICE")
    assert verdict.reason == "only the requester (<@U0ALICE>) may cancel, drain or rerun official runs"


# --- time --------------------------------------------------------------------------------------------------


def test_expiry_defaults_to_24_hours() -> None:
    policy = PolicyConfig()
    assert expires_at(T0, policy, STAGING) == T0 + timedelta(hours=24)
    assert not is_expired(T0, T0 + timedelta(hours=23, minutes=59), policy, STAGING)
    assert is_expired(T0, T0 + timedelta(hours=24), policy, OFFICIAL)


def test_reminder_cutoffs_name_only_the_categories_that_remind() -> None:
    assert reminder_cutoffs(T0, PolicyConfig()) == {OFFICIAL: T0 - timedelta(hours=4)}  # staging: never
    both = _policy(staging={"remind_after_minutes": 15}, official={"remind_after_minutes": 30})
    assert reminder_cutoffs(T0, both) == {
        STAGING: T0 - timedelta(minutes=15),
        OFFICIAL: T0 - timedelta(minutes=30),
    }


def test_reminder_repeats_each_interval_until_expiry() -> None:
    policy = _policy(official={"remind_after_minutes": 30, "expiry_hours": 2})
    assert not reminder_due(T0, None, T0 + timedelta(minutes=29), policy, OFFICIAL)
    assert reminder_due(T0, None, T0 + timedelta(minutes=30), policy, OFFICIAL)
    reminded = T0 + timedelta(minutes=31)
    assert not reminder_due(T0, reminded, T0 + timedelta(minutes=50), policy, OFFICIAL)
    assert reminder_due(T0, reminded, T0 + timedelta(minutes=61), policy, OFFICIAL)
    assert not reminder_due(T0, reminded, T0 + timedelta(hours=2), policy, OFFICIAL)
    assert not reminder_due(T0, None, T0 + timedelta(hours=1), PolicyConfig(), STAGING)


# --- loading -----------------------------------------------------------------------------------------------


def test_partial_category_table_keeps_that_categorys_defaults() -> None:
    policy = _policy(official={"approvers": {"users": ["U0BOB"]}}, staging={"max_parallel": 8})
    assert policy.official.self_approval is False
    assert policy.official.override_approvers is not None and policy.official.override_approvers.is_empty
    assert policy.staging.approvers.anyone and policy.staging.self_approval
    assert policy.staging.max_parallel == 8


@pytest.mark.parametrize(
    ("sections", "fragment"),
    [
        ({"admins": ["carol"]}, "`carol` is not a Slack user id"),
        ({"official": {"approvers": {"users": ["<@U0BOB>"]}}}, "`<@U0BOB>` is not a Slack user id"),
        ({"official": {"approvers": {"usergroups": ["U0BOB"]}}}, "is not a Slack user group id"),
        ({"staging": {"requesters": {"channels": ["#bench"]}}}, "is not a Slack channel id"),
        ({"staging": {"approvals_required": 0}}, "greater than or equal to 1"),
        ({"staging": {"aprovers": {}}}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_policy_is_refused_at_load(sections: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment.replace("[", r"\[")):
        _policy(**sections)
