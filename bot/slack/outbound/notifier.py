"""Deliver the outbox to Slack: post once, then edit in place; retry what failed, never post twice.

Each posted message carries its outbox target in `metadata`. Before a post the row records that one is
under way, so every later attempt (its answer lost, or the sent mark not written) first looks for the
message in the channel. Card edits are paced (`UpdatePacer`); a paced row simply waits, and since the
outbox keeps one pending row per message, the edit that finally goes shows the latest state.

One bad message never blocks the others. Rows go conversation by conversation (a channel's cards and
threads, one person's replies, App Home), the conversations side by side, so a slow call holds up only
its own. A row Slack refuses for a reason no retry fixes, or that cannot be rendered, is set aside with
its error; only outages (5xx, 429, network errors, timeouts) and malformed answers are retried (rules:
`bot/slack/outbound/delivery.py`). A card's thread reads in the order things happened: a reply waits while an
earlier one is pending.

This module runs the rounds and decides what a failure means for a row. Rendering and sending each kind
is `senders.py`, posting once `posting.py`, pacing `pacing.py`, the rows a delivery queues next
`followups.py`; what a refused card means for its request is the request service's
(`withdraw_unpostable`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path

from slack_sdk.web.async_client import AsyncWebClient
from sqlalchemy.exc import SQLAlchemyError

from bot.domain.backoff import backoff
from bot.domain.clock import Clock
from bot.domain.policy import PolicyConfig
from bot.services.requests import withdraw_unpostable
from bot.settings import NotifierConfig
from bot.slack.outbound import delivery
from bot.slack.outbound.delivery import Verdict
from bot.slack.outbound.followups import Followups
from bot.slack.outbound.pacing import UpdatePacer, Wait
from bot.slack.outbound.posting import Poster
from bot.slack.outbound.senders import Senders
from bot.store import outbox
from bot.store.db import Store
from bot.store.records import OutboxItem, OutboxKind

log = logging.getLogger(__name__)

ROUND_ROWS = 200  # rows a delivery round takes on
LANE_ROWS = 50  # of which at most this many from one conversation
FIRST_RETRY_SEC = 1.0  # a failed Slack call is tried again after 1, 2, 4 … s, up to `max_backoff_seconds`


class Notifier:
    def __init__(
        self,
        store: Store,
        client: AsyncWebClient,
        clock: Clock,
        config: NotifierConfig,
        policy: PolicyConfig,
        repo: Path,
        *,
        eager: bool,
        may_deliver: Callable[[], bool],
        before_round: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """`before_round`: what a round started in the background (`start_round`, `kick`) waits for
        first; the bot's waits while requests are being acked (`InFlight.answers_first`)."""
        self._before_round = before_round
        self._store = store
        self._clock = clock
        self._config = config
        self._eager = eager
        self._may_deliver = may_deliver
        pacer = UpdatePacer(
            store,
            clock,
            timedelta(seconds=config.card_update_seconds),
            config.updates_per_minute,
            timedelta(seconds=config.post_interval_seconds),
        )
        self._poster = Poster(store, client, clock, pacer)
        self._followups = Followups(store, clock)
        self._senders = Senders(
            store,
            client,
            clock,
            policy,
            repo,
            pacer,
            self._poster,
            self._followups,
            alpha=config.regression_alpha,
        )
        self._busy: set[str] = set()  # conversations a delivery round is working through
        self._rounds: set[asyncio.Task[int]] = set()  # held, so the loop does not drop a round under way
        self._listing_soon = False  # a round is started that has not yet begun to list the due rows

    def kick(self) -> None:
        """Deliver now instead of at the next tick, so a reply does not wait for the timer.

        Kicks coalesce: while a started round has not yet begun to list the due rows, it will find what
        the kicker wrote, so a burst of replies starts one round, not one each that lists them all.
        Off (`eager=False`) in tests, which call `deliver()` themselves and see every call in order.
        """
        if self._eager and not self._listing_soon and self._may_deliver():
            self._listing_soon = True
            self.start_round()

    def start_round(self) -> None:
        """A delivery round in the background: the caller (a listener, the timer) never waits on Slack.

        Rounds may overlap; each takes only the conversations no other round is working through.
        """
        task = asyncio.create_task(self._round())
        self._rounds.add(task)
        task.add_done_callback(self._rounds.discard)

    async def _round(self) -> int:
        try:
            if self._before_round is not None:
                await self._before_round()
            return await self.deliver()
        except Exception:
            log.exception("outbox delivery round failed; the next one tries again")
            return 0

    async def deliver(self) -> int:
        """Send every due row and wait for it; returns how many were sent.

        A conversation's rows go one after another, conversations side by side.
        """
        self._listing_soon = False  # a kick from here on may need a round of its own
        await self._followups.catch_up_milestones()
        found = await self._due_by_conversation()
        lanes = {lane: rows for lane, rows in found.items() if lane not in self._busy}
        self._busy.update(lanes)  # no await since the check: another round cannot take them too
        sent = await asyncio.gather(*(self._deliver_lane(lane, rows) for lane, rows in lanes.items()))
        return sum(sent)

    async def _due_by_conversation(self) -> dict[str, list[OutboxItem]]:
        """Due rows by conversation, paging past the rows of conversations another round is working
        through, and at most `LANE_ROWS` per conversation: a backlog in one never starves the others."""
        lanes: dict[str, list[OutboxItem]] = {}
        taken, after = 0, 0
        async with self._store.read() as session:
            while taken < ROUND_ROWS:
                page = await outbox.due(session, self._clock.now(), limit=ROUND_ROWS, after_id=after)
                if not page:
                    break
                channels = await outbox.channels_of(session, page)
                for item in page:
                    lane = delivery.conversation_of(item, channels)
                    rows = lanes.setdefault(lane, [])
                    if lane not in self._busy and len(rows) < LANE_ROWS:
                        rows.append(item)
                        taken += 1
                after = page[-1].id
        return {lane: rows for lane, rows in lanes.items() if rows}

    async def _deliver_lane(self, lane: str, items: list[OutboxItem]) -> int:
        sent = 0
        try:
            for item in sorted(items, key=outbox.thread_order):
                try:
                    sent += await self._deliver_one(item)
                except SQLAlchemyError:
                    log.warning(
                        "outbox %s: the database failed while delivering it; it stays pending "
                        "(a post is looked for before it is sent again)",
                        item.id,
                        exc_info=True,
                    )
        finally:
            self._busy.discard(lane)
        return sent

    async def _deliver_one(self, listed: OutboxItem) -> int:
        async with self._store.read() as session:
            item = await outbox.get_due(session, listed.id, self._clock.now())
            if item is None:
                return 0  # sent by another round meanwhile
            earlier = await outbox.earlier_in_thread(session, item)
        if earlier is not None:  # waits its turn; out of the due rows until the earlier one may go
            if earlier.next_attempt_at > self._clock.now():
                why = "waiting for an earlier reply in its thread"
                await self._postpone(item, earlier.next_attempt_at, why, count=False)
            return 0
        try:
            await self._senders.send(item)
        except Wait as wait:
            if wait.until is None:
                await self._postpone(item, self._clock.now() + self._backoff(item), str(wait), count=True)
            else:
                await self._postpone(item, wait.until, str(wait), count=False)
            return 0
        except SQLAlchemyError:
            raise  # the database, not the message: the row stays as it is
        except Exception as exc:
            await self._failed(item, exc)
            return 0
        async with self._store.write() as session:
            await outbox.mark_sent(session, item, self._clock.now())
        self._poster.settled(item.target)
        return 1

    # -- failures ----------------------------------------------------------------------------------------

    async def _failed(self, item: OutboxItem, exc: Exception) -> None:
        """An outage delays a message but never loses it; a malformed answer is retried a few times; a
        refusal or a render that raises sets the row aside (`bot/slack/outbound/delivery.py`)."""
        found, error = delivery.verdict(exc)
        if found is Verdict.UNRENDERABLE:
            log.error("outbox %s (%s) could not be rendered", item.id, item.target, exc_info=exc)
        exhausted = found is Verdict.MALFORMED and item.attempts + 1 >= self._config.max_attempts
        if found in (Verdict.REFUSED, Verdict.UNRENDERABLE) or exhausted:
            await self._give_up(item, error)
            return
        delay = self._backoff(item)
        retry_after = delivery.retry_after(exc)
        if retry_after is not None:
            delay = max(delay, timedelta(seconds=retry_after))
        await self._postpone(item, self._clock.now() + delay, error, count=True)

    async def _give_up(self, item: OutboxItem, error: str) -> None:
        """Set the row aside with its error; the admins' App Home counts such rows."""
        log.warning("outbox %s (%s, %s) set aside: %s", item.id, item.kind.value, item.target, error)
        self._poster.settled(item.target)
        async with self._store.write() as session:
            await outbox.set_aside(session, item.id, error)
            if error == "not_in_channel" and item.kind is OutboxKind.CARD and item.request_id is not None:
                await withdraw_unpostable(session, item.request_id, self._clock.now())
        if item.kind is not OutboxKind.HOME:  # a home tab Slack refuses must not queue itself again
            await self._followups.queue_home_refresh()

    def _backoff(self, item: OutboxItem) -> timedelta:
        return backoff(item.attempts + 1, base=FIRST_RETRY_SEC, cap=self._config.max_backoff_seconds)

    async def _postpone(self, item: OutboxItem, until: datetime, error: str, *, count: bool) -> None:
        attempts = item.attempts + 1 if count else item.attempts
        async with self._store.write() as session:
            await outbox.postpone(session, item.id, attempts=attempts, until=until, error=error)
