"""Who may request, approve, cancel, drain and rerun runs, per category, from `[policy]` in the bot's TOML.

Pure: the caller resolves user-group membership (only when `needs_usergroups` says a rule names a group) and
passes it in on the `Actor`. Roles are decided at click time from these functions, never stored on a card.
Every refusal's reason names who may act, so the ephemeral reply tells the clicker whom to ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot.domain.budget import Budget
from bot.domain.errors import PolicyError
from bot.domain.spec import Category

POLICY_FILE = "configs/csb-bot.toml"

_USER_ID = re.compile(r"^[UW][A-Z0-9_]+$")
_GROUP_ID = re.compile(r"^S[A-Z0-9_]+$")
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9_]+$")


def _slack_id(pattern: re.Pattern[str], what: str, example: str) -> AfterValidator:
    """A name or a mention where an id belongs would silently match nobody, so it is refused at load."""

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"`{value}` is not a Slack {what} id (like {example})")
        return value

    return AfterValidator(check)


UserId = Annotated[str, _slack_id(_USER_ID, "user", "U024BE7LH")]
GroupId = Annotated[str, _slack_id(_GROUP_ID, "user group", "S0614TZR7")]
ChannelId = Annotated[str, _slack_id(_CHANNEL_ID, "channel", "C024BE91L")]


class Requesters(BaseModel):
    """Who may type `/csb run` for a category; an empty list puts no limit on that dimension.

    People (users, groups) and places (channels) are separate conditions and both must hold.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    users: tuple[UserId, ...] = ()
    usergroups: tuple[GroupId, ...] = ()
    channels: tuple[ChannelId, ...] = ()


class Approvers(BaseModel):
    """A set of people: everyone when `anyone`, else the listed users and members of the listed groups.

    Unlike `Requesters`, empty lists mean nobody: approval fails closed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    anyone: bool = False
    users: tuple[UserId, ...] = ()
    usergroups: tuple[GroupId, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.anyone or self.users or self.usergroups)


class CategoryPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    requesters: Requesters = Requesters()
    approvers: Approvers = Approvers()
    # Who may approve a request made with --allow-unpaired; None means the same people as `approvers`.
    # They must be approvers as well: the override narrows who may approve, it never widens it.
    override_approvers: Approvers | None = None
    approvals_required: int = Field(default=1, ge=1)
    self_approval: bool = False
    max_parallel: int = Field(default=100, ge=1)
    expiry_hours: float = Field(default=24, gt=0)
    remind_after_minutes: float | None = Field(default=None, gt=0)
    # `[policy.<category>.budget]`: the monthly budget; past its block line only override approvers approve.
    budget: Budget | None = None

    @property
    def effective_override_approvers(self) -> Approvers:
        return self.approvers if self.override_approvers is None else self.override_approvers


STAGING_DEFAULTS = CategoryPolicy(
    approvers=Approvers(anyone=True),
    self_approval=True,
    max_parallel=60,
)
OFFICIAL_DEFAULTS = CategoryPolicy(
    approvers=Approvers(),
    override_approvers=Approvers(),
    self_approval=False,
    max_parallel=100,
    remind_after_minutes=240,
)
_DEFAULTS: Mapping[str, CategoryPolicy] = {"staging": STAGING_DEFAULTS, "official": OFFICIAL_DEFAULTS}


class PolicyConfig(BaseModel):
    """The `[policy]` section. A category table overrides its shipped defaults key by key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    admins: tuple[UserId, ...] = ()
    staging: CategoryPolicy = STAGING_DEFAULTS
    official: CategoryPolicy = OFFICIAL_DEFAULTS
    # `/csb promote`: who may ask for a promotion and approve it (override_approvers: who may approve
    # one made with --force). Unset keys come from official's approvers, never the requester, one approval.
    promote: CategoryPolicy = CategoryPolicy(approvers=Approvers(), override_approvers=Approvers())

    @model_validator(mode="before")
    @classmethod
    def _promote_over_official(cls, data: Any) -> Any:
        # Promotion writes runs/official: by default the people who approve official runs decide it.
        if not isinstance(data, Mapping):
            return data
        official = data.get("official", {})
        official = official.model_dump() if isinstance(official, CategoryPolicy) else official
        merged = {**OFFICIAL_DEFAULTS.model_dump(), **(official if isinstance(official, Mapping) else {})}
        promote = data.get("promote", {})
        if not isinstance(promote, Mapping):
            return data
        defaults = {
            **CategoryPolicy().model_dump(),
            "approvers": merged["approvers"],
            "override_approvers": merged["override_approvers"] or merged["approvers"],
            "approvals_required": 1,
            "self_approval": False,
        }
        return {**data, "promote": {**defaults, **promote}}

    @field_validator("staging", "official", mode="before")
    @classmethod
    def _over_category_defaults(cls, value: Any, info: ValidationInfo) -> Any:
        # Else `[policy.official]` with one key would fall back to the class defaults, not official's.
        if not isinstance(value, Mapping):
            return value
        defaults = _DEFAULTS[str(info.field_name)].model_dump()
        return {**defaults, **value}

    def for_category(self, category: Category) -> CategoryPolicy:
        return self.official if category is Category.OFFICIAL else self.staging


BOT_ACTOR = "csb-bot"  # who decided, in the audit trail and on the card, when the bot itself did


class Actor(BaseModel):
    """The person clicking, with the user groups they belong to (only those the rules name are needed)."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    usergroups: frozenset[str] = frozenset()


class Verdict(BaseModel):
    """Allowed or not; a refusal's reason is shown to the clicker and names who may act."""

    model_config = ConfigDict(frozen=True)

    allowed: bool
    reason: str

    def require(self) -> None:
        """Raise the refusal as a PolicyError, for callers that handle it at the Slack boundary."""
        if not self.allowed:
            raise PolicyError(self.reason)


def needs_usergroups(policy: PolicyConfig, category: Category) -> bool:
    """True when a rule of this category names a user group, so membership must be looked up."""
    rules = policy.for_category(category)
    groups = (rules.requesters, rules.approvers, rules.effective_override_approvers)
    return any(rule.usergroups for rule in groups)


def may_request(policy: PolicyConfig, category: Category, actor: Actor, channel_id: str) -> Verdict:
    requesters = policy.for_category(category).requesters
    if requesters.channels and channel_id not in requesters.channels:
        places = _join([_channel(c) for c in requesters.channels])
        return _deny(f"{category} runs may be requested only in {places}")
    if not (requesters.users or requesters.usergroups):
        return _allow(f"anyone may request {category} runs")
    member = _membership(requesters.users, requesters.usergroups, actor)
    if member:
        return _allow(member)
    who = _people(requesters.users, requesters.usergroups)
    return _deny(f"only {who} may request {category} runs")


def may_approve(
    policy: PolicyConfig,
    category: Category,
    actor: Actor,
    requester: str,
    already_approved_by: Iterable[str] = (),
    unpaired_override: bool = False,
    editors: Iterable[str] = (),
    budget_override: bool = False,
) -> Verdict:
    """Whether this click counts as one more approval; the caller counts them against `approvals_needed`.

    Whoever edited the request shaped what would run, so `editors` are held to the requester's rule:
    where self-approval is off, one person cannot edit someone's request and then approve it alone.
    """
    rules = policy.for_category(category)
    if rules.approvers.is_empty:
        return _deny(
            f"no one is listed as an approver for {category} runs, so it cannot be approved: "
            f"{_ask_admins(policy)} to add approvers in {POLICY_FILE}"
        )
    approver = _role(rules.approvers, actor)
    if not approver:
        return _deny(_approvers_line(rules, category))
    if not rules.self_approval and actor.user_id == requester:
        return _deny(
            f"you requested this {category} run, and the requester may not approve their own request"
        )
    if not rules.self_approval and actor.user_id in set(editors):
        return _deny(
            f"you edited this {category} request, so you count as its requester, and the requester may not "
            "approve their own request"
        )
    if actor.user_id in set(already_approved_by):
        return _deny(
            f"you have already approved this request; it needs {rules.approvals_required} approvals "
            f"from different people"
        )
    overrides = ((unpaired_override, _UNPAIRED), (budget_override, _OVER_BUDGET))
    for overriding, what in overrides:
        refusal = _override_refusal(policy, rules, category, actor, what) if overriding else None
        if refusal is not None:
            return refusal
    return _allow(approver)


_UNPAIRED = "overrides the pairing rule (--allow-unpaired)"
_OVER_BUDGET = "is past its monthly budget's block line"


def may_control(
    policy: PolicyConfig,
    category: Category,
    actor: Actor,
    requester: str,
    action: str = "cancel, drain or rerun",
) -> Verdict:
    """Cancel, drain and rerun: the requester, anyone who may approve this category, and the admins."""
    rules = policy.for_category(category)
    if actor.user_id == requester:
        return _allow("requester")
    if actor.user_id in policy.admins:
        return _allow("admin")
    approver = _role(rules.approvers, actor)
    if approver:
        return _allow(approver)
    who = [f"the requester (<@{requester}>)"]
    if not rules.approvers.is_empty:
        who.append(f"{category} approvers ({_people(rules.approvers.users, rules.approvers.usergroups)})")
    if policy.admins:
        who.append(f"admins ({_join([_user(u) for u in policy.admins])})")
    return _deny(f"only {_join(who)} may {action} {category} runs")


def may_administer(policy: PolicyConfig, actor: Actor, action: str) -> Verdict:
    """What concerns every run at once (draining an account): the admins only."""
    if actor.user_id in policy.admins:
        return _allow("admin")
    return _deny(f"only the admins may {action}; {_ask_admins(policy)}")


def may_see(
    policy: PolicyConfig, category: Category, actor: Actor, requester: str, in_its_channel: bool
) -> bool:
    """A run's parameters and audit trail: in its own channel, or to its requester, the people listed
    as its approvers and the admins. `anyone` approvers do not count here: outside the channel they
    could never see the card, so they do not see its details either (the channel may be private)."""
    if in_its_channel or actor.user_id == requester or actor.user_id in policy.admins:
        return True
    rules = policy.for_category(category)
    listed = (rules.approvers, rules.effective_override_approvers)
    return any(_membership(rule.users, rule.usergroups, actor) for rule in listed)


def may_act_from(
    policy: PolicyConfig, category: Category, actor: Actor, requester: str, in_its_channel: bool
) -> Verdict:
    """A click on a request or run, from where it was clicked: the one rule of `may_see`, so no surface
    (App Home, a card copy, a DM) lets anyone act on what `/csb status` would not show them there."""
    if may_see(policy, category, actor, requester, in_its_channel):
        return _allow("may see it here")
    return _deny(
        "its details are shown only in its channel or to its requester, approvers and admins; "
        "act on it in its channel"
    )


def approvals_needed(policy: PolicyConfig, category: Category) -> int:
    return policy.for_category(category).approvals_required


def max_parallel(policy: PolicyConfig, category: Category) -> int:
    return policy.for_category(category).max_parallel


def expires_at(created_at: datetime, policy: PolicyConfig, category: Category) -> datetime:
    return created_at + timedelta(hours=policy.for_category(category).expiry_hours)


def is_expired(created_at: datetime, now: datetime, policy: PolicyConfig, category: Category) -> bool:
    """An expired request shows EXPIRED and can no longer be approved; nothing is ever auto-approved."""
    return now >= expires_at(created_at, policy, category)


def reminder_due(
    created_at: datetime,
    last_reminded_at: datetime | None,
    now: datetime,
    policy: PolicyConfig,
    category: Category,
) -> bool:
    """True once the wait has passed since the request (or the last reminder); never after expiry.

    Repeats every `remind_after_minutes` while the request is pending, so approvers get a nudge per
    interval rather than one they may miss.
    """
    cutoff = reminder_cutoffs(now, policy).get(category)
    if cutoff is None or is_expired(created_at, now, policy, category):
        return False
    return (last_reminded_at or created_at) <= cutoff


def reminder_cutoffs(now: datetime, policy: PolicyConfig) -> dict[Category, datetime]:
    """For each category that reminds, how late a request's last reminder (or, before one, its creation)
    may be for the next to be due now: `reminder_due`'s wait, as a bound a query can filter on."""
    cutoffs = {}
    for category in Category:
        minutes = policy.for_category(category).remind_after_minutes
        if minutes is not None:
            cutoffs[category] = now - timedelta(minutes=minutes)
    return cutoffs


def _override_refusal(
    policy: PolicyConfig, rules: CategoryPolicy, category: Category, actor: Actor, what: str
) -> Verdict | None:
    overriders = rules.effective_override_approvers
    if overriders.is_empty:
        return _deny(
            f"this request {what} and no one may approve that for "
            f"{category} runs: {_ask_admins(policy)} to add override_approvers in {POLICY_FILE}"
        )
    if _role(overriders, actor):
        return None
    who = f"{category} approvers" if overriders.anyone else _people(overriders.users, overriders.usergroups)
    return _deny(f"this request {what}; only {who} may approve it")


def _approvers_line(rules: CategoryPolicy, category: Category) -> str:
    approvers = rules.approvers
    who = "anyone" if approvers.anyone else f"only {_people(approvers.users, approvers.usergroups)}"
    return f"{who} may approve {category} runs"


def _role(approvers: Approvers, actor: Actor) -> str:
    """Why the actor is in the set (for the audit line), or "" when not."""
    if approvers.anyone:
        return "anyone may approve"
    return _membership(approvers.users, approvers.usergroups, actor)


def _membership(users: tuple[str, ...], usergroups: tuple[str, ...], actor: Actor) -> str:
    if actor.user_id in users:
        return "listed user"
    group = next((g for g in usergroups if g in actor.usergroups), None)
    return f"member of {_group(group)}" if group else ""


def _ask_admins(policy: PolicyConfig) -> str:
    if not policy.admins:
        return "ask an admin"
    return f"ask an admin ({_join([_user(u) for u in policy.admins])})"


def _people(users: tuple[str, ...], usergroups: tuple[str, ...]) -> str:
    parts = [_user(u) for u in users] + [f"members of {_group(g)}" for g in usergroups]
    return _join(parts)


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} or {parts[-1]}"


def _user(user_id: str) -> str:
    return f"<@{user_id}>"


def _group(group_id: str) -> str:
    return f"<!subteam^{group_id}>"


def _channel(channel_id: str) -> str:
    return f"<#{channel_id}>"


def _allow(reason: str) -> Verdict:
    return Verdict(allowed=True, reason=reason)


def _deny(reason: str) -> Verdict:
    return Verdict(allowed=False, reason=reason)
