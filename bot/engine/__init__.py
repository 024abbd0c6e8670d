"""The scheduler: lease, queue, slots, accounts, retries, stops and reconciliation after a restart."""

from bot.csb.command import LaunchConfig
from bot.engine.engine import Engine
from bot.engine.factory import build_engine

__all__ = ["Engine", "LaunchConfig", "build_engine"]
