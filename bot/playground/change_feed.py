"""A change feed for the playground page: every visible change becomes a small dict on each queue.

Queues are unbounded and filled with `put_nowait`, so a slow page never slows the Web API down.
"""

from __future__ import annotations

import asyncio
from typing import Any


class EventHub:
    """Fan-out of change events to whoever subscribed (the page's SSE/WebSocket handler, tests)."""

    def __init__(self) -> None:
        self._queues: list[asyncio.Queue[dict[str, Any]]] = []

    def subscribe(self) -> asyncio.Queue[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._queues.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        if queue in self._queues:
            self._queues.remove(queue)

    def publish(self, kind: str, **fields: Any) -> None:
        event = {"kind": kind, **fields}
        for queue in self._queues:
            queue.put_nowait(event)
