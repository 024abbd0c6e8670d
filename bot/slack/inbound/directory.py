"""Who a Slack user is for policy: their user groups, looked up only when a rule names a group."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from bot.domain.clock import Clock
from bot.domain.policy import Actor, PolicyConfig, needs_usergroups
from bot.domain.spec import Category

CACHE_FOR = timedelta(minutes=5)


class Directory:
    def __init__(self, client: AsyncWebClient, policy: PolicyConfig, clock: Clock) -> None:
        self._client = client
        self._policy = policy
        self._clock = clock
        self._groups: dict[str, frozenset[str]] = {}
        self._fetched_at: datetime | None = None
        self._lock = asyncio.Lock()

    async def actor(self, user_id: str) -> Actor:
        if not any(needs_usergroups(self._policy, category) for category in Category):
            return Actor(user_id=user_id)
        groups = await self._usergroups()
        return Actor(
            user_id=user_id, usergroups=frozenset(g for g, members in groups.items() if user_id in members)
        )

    async def _usergroups(self) -> dict[str, frozenset[str]]:
        """Cached for a few minutes: membership changes rarely and usergroups.list is rate limited."""
        async with self._lock:
            now = self._clock.now()
            if self._fetched_at is None or now - self._fetched_at > CACHE_FOR:
                response = await self._client.usergroups_list(include_users=True)
                listed: list[dict[str, Any]] = response.get("usergroups", [])
                self._groups = {str(group["id"]): frozenset(group.get("users", [])) for group in listed}
                self._fetched_at = now
            return self._groups
