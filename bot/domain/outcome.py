"""Lane outcomes in CSB's own words, and which failures are the infrastructure's fault."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bot.domain.reason import ReasonKind

# A lane's status lives with the other state machines; it is the outcome's status, so it is named here too.
from bot.domain.states import LaneStatus as LaneStatus
from bot.domain.verdict import LaneVerdict

# The exit code recorded for a lane whose end its executor did not see (adopted after a restart, a job
# its cluster ended). Not -1, which is how a process killed by SIGHUP exits.
EXIT_UNKNOWN = -1000


class TrialOutcome(BaseModel):
    """The classified result of one lane's trial."""

    model_config = ConfigDict(frozen=True)

    status: LaneStatus
    reward: float | None = None
    exception_type: str | None = None
    reason: str | None = None  # the message; its other parts are the fields below (`bot.domain.reason`)
    reason_kind: ReasonKind | None = None
    log_line: str | None = None  # the line of the lane's log that tells why, when the bot found one
    infra: bool = False  # an infrastructure failure, worth a retry (never set for task outcomes)
    verdict: LaneVerdict | None = None  # CSB's verdicts on the trial, when there is one
