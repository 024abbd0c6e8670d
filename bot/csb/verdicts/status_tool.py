"""CSB's status tool (`aggregate_status.py`'s `classify_task`) on a trial that has a readable result.json.

`AgentTimeoutError` with a reward is a scored `completed_pass|fail` (timed out); any other exception is
`errored`; else a reward above 0 passes. Zero-token and crash trials are not detected by this tool (they
are `completed_fail` here, `errored` to the MANIFEST). The reward falls back to `rewards.score`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.domain.classify import TIMED_OUT_BUT_SCORED, trial_reward
from bot.domain.verdict import StatusToolStatus


def status_tool_status(result: Mapping[str, Any]) -> StatusToolStatus:
    reward = trial_reward(result)
    exception = result.get("exception_info")
    if exception is not None:
        kind = (
            exception.get("exception_type", exception.get("type")) if isinstance(exception, Mapping) else None
        )
        if kind != TIMED_OUT_BUT_SCORED or reward is None:
            return StatusToolStatus.ERRORED
    if reward is not None and reward > 0:
        return StatusToolStatus.COMPLETED_PASS
    return StatusToolStatus.COMPLETED_FAIL
