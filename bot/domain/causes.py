"""Why lanes failed, grouped by cause as CSB's triage groups them: by fingerprint, with its category.

A lane has a cause when it errored, timed out, or is part of a pair CSB's rules do not count. The cause is
its exception's fingerprint (`status_fingerprints.py`) when it has one; else the MANIFEST's rule that
made it `errored` (zero tokens: an account whose token failed; a crash); else the curation rule it broke
(MCP never called: MCP not injected, category B; a baseline that called MCP); else, for a lane with no
trial to judge, that there was none (Harbor or its host died: category A) or that the bot stopped it at
its time limit (category D, as CSB files a wall-clock timeout). Pure; the views put it in words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from bot.domain.integrity import InvalidRule, pair_invalidity
from bot.domain.outcome import LaneStatus
from bot.domain.states import UNSCORED_LANE_STATES
from bot.domain.verdict import Category, Fingerprint, LaneVerdict, ManifestRule


class OtherCause(StrEnum):
    """Causes that are not a fingerprint (no exception to fingerprint)."""

    ZERO_TOKEN = "zero_token"
    CRASH = "crash"
    MCP_NEVER_USED = "mcp_never_used"
    BASELINE_CONTAMINATED = "baseline_contaminated"
    NO_TRIAL_RESULT = "no_trial_result"
    LANE_TIMEOUT = "lane_timeout"


OTHER_CATEGORY = {
    OtherCause.ZERO_TOKEN: Category.A,  # E004 OAuth expired: rerun on a working account
    OtherCause.CRASH: Category.A,  # E011 VM killed
    OtherCause.MCP_NEVER_USED: Category.B,  # E009 MCP not injected
    OtherCause.BASELINE_CONTAMINATED: Category.B,  # the baseline's setup reached MCP
    OtherCause.NO_TRIAL_RESULT: Category.A,  # no result.json + killed
    OtherCause.LANE_TIMEOUT: Category.D,  # E005 wall-clock timeout
}


@dataclass(frozen=True)
class Cause:
    id: str  # a fingerprint id, or an `OtherCause`
    category: Category | None
    fingerprint: Fingerprint | None = None  # CSB's label and advice, when the cause is one


@dataclass(frozen=True)
class CauseGroup:
    cause: Cause
    lanes: tuple[str, ...]  # `<task>/<role>`, in the order given


def lane_cause(
    status: LaneStatus, verdict: LaneVerdict | None, broken: Iterable[InvalidRule] = ()
) -> Cause | None:
    """The cause of one lane's failure, or None for a lane that is a result (passed, or a genuine fail)."""
    rules = set(broken)
    failing = status in UNSCORED_LANE_STATES or bool(rules)
    if verdict is not None and verdict.fingerprint is not None and (failing or verdict.timed_out):
        return Cause(verdict.fingerprint.id, verdict.fingerprint.category, verdict.fingerprint)
    if verdict is not None and verdict.manifest_rule is ManifestRule.ZERO_TOKEN:
        return _other(OtherCause.ZERO_TOKEN)
    if verdict is not None and verdict.manifest_rule is ManifestRule.CRASH:
        return _other(OtherCause.CRASH)
    if InvalidRule.MCP_NEVER_USED in rules:
        return _other(OtherCause.MCP_NEVER_USED)
    if InvalidRule.BASELINE_CONTAMINATED in rules:
        return _other(OtherCause.BASELINE_CONTAMINATED)
    if verdict is None and status is LaneStatus.ERRORED:
        return _other(OtherCause.NO_TRIAL_RESULT)
    if verdict is None and status is LaneStatus.TIMEOUT:
        return _other(OtherCause.LANE_TIMEOUT)
    return None


def group_causes(items: Iterable[tuple[str, Cause | None]]) -> list[CauseGroup]:
    """Lanes (`<task>/<role>`, cause) grouped by cause id: the largest group first, then by id."""
    groups: dict[str, tuple[Cause, list[str]]] = {}
    for lane, cause in items:
        if cause is not None:
            groups.setdefault(cause.id, (cause, []))[1].append(lane)
    ordered = sorted(groups.values(), key=lambda group: (-len(group[1]), group[0].id))
    return [CauseGroup(cause, tuple(lanes)) for cause, lanes in ordered]


def _other(cause: OtherCause) -> Cause:
    return Cause(cause.value, OTHER_CATEGORY[cause])


LaneEnd = tuple[LaneStatus, LaneVerdict | None]


def pair_causes(task_id: str, lanes: dict[str, LaneEnd]) -> list[tuple[str, Cause | None]]:
    """Each lane of one pair (role → status and verdict) with its cause; the pair's curation rules are
    charged to the lane that broke them."""
    baseline, mcp = lanes.get("baseline"), lanes.get("mcp")
    invalid = pair_invalidity(baseline[1] if baseline else None, mcp[1] if mcp else None)
    return [
        (f"{task_id}/{role}", lane_cause(status, verdict, [i.rule for i in invalid if i.lane == role]))
        for role, (status, verdict) in lanes.items()
    ]
