"""Refused clicks and commands: logged with who, what and why, and kept in the audit trail of the
request or run they concerned, so "why did nothing happen?" has an answer after the fact."""

from __future__ import annotations

import logging

from bot.domain.clock import Clock
from bot.store import audit
from bot.store.availability import DATABASE_ERRORS, unavailable
from bot.store.db import Store
from bot.store.records import RunRequest

log = logging.getLogger(__name__)

REFUSED = "refused "  # the audit action of a refusal starts with it: `refused approve`, `refused cancel`
_REASON_CHARS = 1000  # a refusal names rules and people; the audit line stays readable


async def record_refusal(
    store: Store,
    clock: Clock,
    request: RunRequest,
    *,
    action: str,
    actor: str,
    reason: str,
    run_id: int | None = None,
) -> None:
    """`action` is what was tried (`approve`, `cancel`, …); recorded as `refused <action>`."""
    log.info("refused %s of #%s by %s: %s", action, run_id or request.id, actor, reason)
    try:
        async with store.write() as session:
            await audit.record(
                session,
                request_id=request.id,
                run_id=run_id,
                action=f"{REFUSED}{action}",
                actor=actor,
                at=clock.now(),
                spec_hash=request.spec_hash,
                revision=request.revision,
                reason=reason[:_REASON_CHARS],
            )
    except DATABASE_ERRORS as exc:
        if not unavailable(exc):
            raise
        log.warning("refusal of %s by %s not in the audit trail: database unavailable", action, actor)
