"""The MANIFEST's per-task status (`generate_manifest.py`'s `extract_task_info`), rule for rule, in order.

1. An exception with a reward above 0 is `passed`, with a reward of 0 `failed`, without one `errored`.
2. Otherwise a zero-token trial (input and output both 0: an account whose token failed) or a crash
   (both token counts null, no trajectory, no reward or 0, a transcript of at most 5 lines) is `errored`.
3. Otherwise a reward above 0 is `passed`, anything else `failed`.
The reward is `verifier_result.rewards.reward` alone (no `score` fallback here). A trial is `timed_out`
when its exception type contains `Timeout` or `timeout`, with the seconds from its message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.csb.verdicts.bounded_read import Notes, number
from bot.domain.verdict import ManifestRule, ManifestStatus

CRASH_MAX_LINES = 5
_TIMEOUT_SECONDS = re.compile(r"timed out after\s+([\d.]+)\s+seconds", re.IGNORECASE)


@dataclass(frozen=True)
class ManifestVerdict:
    status: ManifestStatus
    rule: ManifestRule | None
    reward: float
    timed_out: bool
    timeout_seconds: float | None


def manifest_status(
    result: Mapping[str, Any], *, has_trajectory: bool, transcript_lines: int, notes: Notes
) -> ManifestVerdict:
    rewards = _mapping(_mapping(result.get("verifier_result")).get("rewards"))
    reward = number(rewards, "reward", notes, "result.json verifier_result.rewards")
    agent = _mapping(result.get("agent_result"))
    n_in = number(agent, "n_input_tokens", notes, "result.json agent_result")
    n_out = number(agent, "n_output_tokens", notes, "result.json agent_result")
    exception = result.get("exception_info")
    timed_out, seconds = _timeout(exception)
    if exception is not None:
        if reward is not None and reward > 0:
            return ManifestVerdict(ManifestStatus.PASSED, None, round(reward, 4), timed_out, seconds)
        if reward == 0:
            return ManifestVerdict(ManifestStatus.FAILED, None, 0.0, timed_out, seconds)
        return ManifestVerdict(
            ManifestStatus.ERRORED, ManifestRule.EXCEPTION_WITHOUT_REWARD, 0.0, timed_out, seconds
        )
    if n_in == 0 and n_out == 0:
        return ManifestVerdict(ManifestStatus.ERRORED, ManifestRule.ZERO_TOKEN, 0.0, False, None)
    crash = (
        n_in is None
        and n_out is None
        and not has_trajectory
        and (reward is None or reward == 0)
        and transcript_lines <= CRASH_MAX_LINES
    )
    if crash:
        return ManifestVerdict(ManifestStatus.ERRORED, ManifestRule.CRASH, 0.0, False, None)
    if reward is not None and reward > 0:
        return ManifestVerdict(ManifestStatus.PASSED, None, round(reward, 4), False, None)
    return ManifestVerdict(ManifestStatus.FAILED, None, round(reward or 0.0, 4), False, None)


def _timeout(exception: Any) -> tuple[bool, float | None]:
    if not isinstance(exception, Mapping):
        return False, None
    kind = str(exception.get("exception_type") or "")
    if "Timeout" not in kind and "timeout" not in kind:
        return False, None
    match = _TIMEOUT_SECONDS.search(str(exception.get("exception_message") or ""))
    return True, float(match.group(1)) if match else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
