"""The scheduler: lease, queue, slots, accounts, retries, stops and reconciliation after a restart."""

from .dispatch import LaunchConfig
from .engine import Engine
from .factory import build_engine

__all__ = ["Engine", "LaunchConfig", "build_engine"]
