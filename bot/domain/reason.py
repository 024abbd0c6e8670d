"""Why a lane ended as it did, as fields: what kind of ending, the message, the log's telling line.

Stored in the lane's columns when it ends (`bot.store.lanes.finish_lanes`) and read back whole, so no
module ever joins a reason into one string and splits it again; only `bot.slack.views` puts it in words.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ReasonKind(StrEnum):
    """How the bot learnt why the lane ended; the views word each differently."""

    EXCEPTION = "exception"  # the trial raised: its type and first line
    NO_RESULT = "no_result"  # Harbor ended without writing a trial result
    NO_RESULT_IN_TIME = "no_result_in_time"  # nothing written before the lane's time limit
    EXECUTOR = "executor"  # the executor ended the lane itself and said why
    UNREADABLE = "unreadable"  # the trial result could not be read


@dataclass(frozen=True)
class LaneReason:
    """A lane's reason as stored: each part None when there is none."""

    kind: ReasonKind | None = None
    message: str | None = None
    exception_type: str | None = None
    log_line: str | None = None  # the line of the lane's log that tells why (a rate limit, Harbor's last)
    log_path: str | None = None  # where the lane's whole log is
    fingerprint: str | None = None  # CSB's error-catalog id, when it knows the error

    @property
    def empty(self) -> bool:
        return self.message is None and self.exception_type is None and self.log_line is None
