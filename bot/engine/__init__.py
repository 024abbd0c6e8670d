"""The scheduler: lease, queue, slots, accounts, retries, stops and reconciliation after a restart."""

from .engine import Engine
from .factory import build_engine
from .lane_launch import LaunchConfig

__all__ = ["Engine", "LaunchConfig", "build_engine"]
