"""The scheduler: lease, queue, slots, accounts, retries, stops and reconciliation after a restart."""

from bot.engine.engine import Engine
from bot.engine.factory import build_engine

__all__ = ["Engine", "build_engine"]
