"""Pure pydantic and plain functions, no I/O: what a run is, how outcomes read, who may act."""

from .clock import Clock, ManualClock, SystemClock
from .errors import CsbBotError, InfraError, PolicyError, UserInputError
from .outcome import LaneStatus, TrialOutcome
from .spec import Category, LanePlan, LaneRole, Mode, RunParams, RunSpec, TaskRef

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
