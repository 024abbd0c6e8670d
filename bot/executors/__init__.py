"""Where lanes run: the `Executor` seam the engine knows, and each executor by its kind (`registry`)."""

from bot.executors.base import Executor, ExecutorContext, ExecutorSettings, LaneLaunch, LaneRef, Probe
from bot.executors.registry import build_executor, check_executor

__all__ = [
    "Executor",
    "ExecutorContext",
    "ExecutorSettings",
    "LaneLaunch",
    "LaneRef",
    "Probe",
    "build_executor",
    "check_executor",
]
