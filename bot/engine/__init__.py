"""The scheduler: lease, queue, slots, accounts, retries, stops and reconciliation after a restart."""

from typing import TYPE_CHECKING

from bot.domain.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from bot.engine.engine import Engine
    from bot.engine.factory import build_engine

__all__ = ["Engine", "build_engine"]
# Loaded on first use: `csb-bot check` reads `bot.engine.accounts` without starting an engine.
__getattr__ = lazy_exports(
    __name__, {"bot.engine.engine": ("Engine",), "bot.engine.factory": ("build_engine",)}
)
