"""Ephemeral replies go through the outbox like every other message, so a Slack hiccup cannot drop them."""

from __future__ import annotations

import uuid

from bot.domain.clock import Clock
from bot.store import outbox
from bot.store.db import Store
from bot.store.models import OutboxKind


class ReplyService:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def ephemeral(self, response_url: str | None, text: str) -> None:
        if response_url is not None:
            await self._enqueue(OutboxKind.EPHEMERAL, text=text, response_url=response_url)

    async def ephemeral_in_card(self, request_id: int, user_id: str, text: str) -> None:
        """For modal submissions and App Home clicks, which have no response_url: shown to `user_id`
        in the card's channel."""
        await self._enqueue(OutboxKind.EPHEMERAL, request_id=request_id, user_id=user_id, text=text)

    async def card_copy(self, response_url: str | None, request_id: int) -> None:
        """The request's current card, only for the person who asked."""
        if response_url is not None:
            await self._enqueue(OutboxKind.CARD_COPY, request_id=request_id, response_url=response_url)

    async def _enqueue(
        self,
        kind: OutboxKind,
        *,
        text: str | None = None,
        request_id: int | None = None,
        user_id: str | None = None,
        response_url: str | None = None,
    ) -> None:
        async with self._store.write() as session:
            await outbox.enqueue(
                session,
                kind=kind,
                target=f"ephemeral:{uuid.uuid4().hex}",  # every reply is its own message
                now=self._clock.now(),
                request_id=request_id,
                user_id=user_id,
                text=text,
                response_url=response_url,
            )
