"""Who may ask for and approve a promotion to `runs/official`, from `[policy.promote]`.

A promotion rewrites what every later pairing guard and the leaderboard read, so it is gated like a
category of runs: requesters and approvers as configured there, never its requester by default, and a
`--force` (CSB's bypass of its gates) only by the override approvers. Pure, as `policy.py`.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.domain.policy import (
    POLICY_FILE,
    Actor,
    PolicyConfig,
    Verdict,
    _membership,
    _people,
    _role,
)


def may_request_promotion(policy: PolicyConfig, actor: Actor, channel_id: str) -> Verdict:
    requesters = policy.promote.requesters
    if requesters.channels and channel_id not in requesters.channels:
        return Verdict(allowed=False, reason="promotions may not be requested in this channel")
    if not (requesters.users or requesters.usergroups):
        return Verdict(allowed=True, reason="anyone may request a promotion")
    member = _membership(requesters.users, requesters.usergroups, actor)
    if member:
        return Verdict(allowed=True, reason=member)
    who = _people(requesters.users, requesters.usergroups)
    return Verdict(allowed=False, reason=f"only {who} may request a promotion")


def may_approve_promotion(
    policy: PolicyConfig, actor: Actor, requester: str, already: Iterable[str], forced: bool
) -> Verdict:
    """Whether this click counts as one more approval of a promotion (the caller counts them)."""
    rules = policy.promote
    if rules.approvers.is_empty:
        return Verdict(
            allowed=False,
            reason=f"no one is listed as a promotion approver: add them under [policy.promote] or "
            f"[policy.official] approvers in {POLICY_FILE}",
        )
    role = _role(rules.approvers, actor)
    if not role:
        who = (
            "anyone" if rules.approvers.anyone else _people(rules.approvers.users, rules.approvers.usergroups)
        )
        return Verdict(allowed=False, reason=f"only {who} may approve a promotion")
    if not rules.self_approval and actor.user_id == requester:
        return Verdict(allowed=False, reason="you asked for this promotion, and may not approve it yourself")
    if actor.user_id in set(already):
        return Verdict(allowed=False, reason="you have already approved this promotion")
    if forced:
        overriders = rules.effective_override_approvers
        if overriders.is_empty:
            return Verdict(
                allowed=False,
                reason=f"this promotion bypasses CSB's gates (--force) and no one may approve that: add "
                f"override_approvers under [policy.promote] in {POLICY_FILE}",
            )
        if not _role(overriders, actor):
            who = _people(overriders.users, overriders.usergroups) or "the override approvers"
            return Verdict(
                allowed=False,
                reason=f"this promotion bypasses CSB's gates (--force); only {who} may approve it",
            )
    return Verdict(allowed=True, reason=role)


def promotion_approvals_needed(policy: PolicyConfig) -> int:
    return policy.promote.approvals_required
