"""A lane's reason in words, from its stored fields (`bot.domain.reason`): the one place that words it."""

from __future__ import annotations

from bot.domain.states import UNSCORED_LANE_STATES
from bot.domain.stats import LaneResult

_WITH_LOG = UNSCORED_LANE_STATES  # lanes whose log may say what the trial did not


def reason_words(result: LaneResult) -> str | None:
    """Why a lane ended as it did: the exception's type and message when the trial raised one, else
    what the bot saw (Harbor's exit without a result, the time limit) and where the lane's log is."""
    reason = result.reason
    if reason is None or (reason.empty and result.status not in _WITH_LOG):
        return None
    log = f"; log: {reason.log_line}" if reason.log_line else ""
    if result.status not in _WITH_LOG:
        return f"{reason.message or ''}{log}" or None
    if reason.exception_type:
        if reason.message and reason.exception_type not in reason.message:
            return f"{reason.exception_type}: {reason.message}{log}"
        return f"{reason.message or reason.exception_type}{log}"
    said = reason.message or f"{result.status.value} without a recorded reason"
    if not reason.log_path:
        return f"{said}{log}"
    ends = f"; it ends: {reason.log_line}" if reason.log_line else ""
    return f"{said}; log: {reason.log_path}{ends}"
