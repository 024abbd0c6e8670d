"""Ephemeral replies go through the outbox like every other message, so a Slack hiccup cannot drop them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable

from bot.domain import outbox_keys
from bot.domain.clock import Clock
from bot.store import outbox
from bot.store.availability import DATABASE_ERRORS, unavailable
from bot.store.db import Store
from bot.store.records import OutboxKind

log = logging.getLogger(__name__)

DirectReply = Callable[[str, str], Awaitable[None]]


class ReplyService:
    """`direct` posts to a response_url without the database: the fallback when it is busy or away."""

    def __init__(self, store: Store, clock: Clock, direct: DirectReply) -> None:
        self._store = store
        self._clock = clock
        self._direct = direct

    async def ephemeral(self, response_url: str | None, text: str, *, skip_outbox: bool = False) -> None:
        """Through the outbox; straight to Slack when the database cannot take it (`skip_outbox` when
        the caller already knows), so no command or click goes unanswered."""
        if response_url is None:
            return
        if not skip_outbox:
            try:
                await self._enqueue(OutboxKind.EPHEMERAL, text=text, response_url=response_url)
                return
            except DATABASE_ERRORS as exc:
                if not unavailable(exc):
                    raise
                log.warning("database unavailable (%s); replying directly", type(exc).__name__)
        await self._direct(response_url, text)

    async def ephemeral_in_card(self, request_id: int, user_id: str, text: str) -> None:
        """For modal submissions and App Home clicks, which have no response_url: shown to `user_id`
        in the card's channel."""
        await self._enqueue(OutboxKind.EPHEMERAL, request_id=request_id, user_id=user_id, text=text)

    async def card_copy(self, response_url: str | None, request_id: int) -> None:
        """The request's current card, only for the person who asked."""
        if response_url is not None:
            await self._enqueue(OutboxKind.CARD_COPY, request_id=request_id, response_url=response_url)

    async def coverage_buttons(self, response_url: str | None, values: tuple[str, ...]) -> None:
        """`Fill gaps` / `Plan variance` under a coverage answer, after its parts (the same reply's
        conversation, so in order); `values` are the buttons' `/csb coverage` words."""
        if response_url is not None and values:
            await self._enqueue(OutboxKind.COVERAGE, text="\n".join(values), response_url=response_url)

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
                target=outbox_keys.ephemeral(uuid.uuid4().hex),  # every reply is its own message
                now=self._clock.now(),
                request_id=request_id,
                user_id=user_id,
                text=text,
                response_url=response_url,
            )
