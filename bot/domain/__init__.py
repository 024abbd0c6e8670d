"""Pure pydantic and plain functions, no I/O: what a run is, how outcomes read, who may act."""

from bot.domain.clock import Clock, ManualClock, SystemClock
from bot.domain.errors import CsbBotError, InfraError, PolicyError, UserInputError
from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.domain.spec import Category, LanePlan, LaneRole, Mode, RunParams, RunSpec, TaskRef

__all__ = [
    "Category",
    "Clock",
    "CsbBotError",
    "InfraError",
    "LanePlan",
    "LaneRole",
    "LaneStatus",
    "ManualClock",
    "Mode",
    "PolicyError",
    "RunParams",
    "RunSpec",
    "SystemClock",
    "TaskRef",
    "TrialOutcome",
    "UserInputError",
]
