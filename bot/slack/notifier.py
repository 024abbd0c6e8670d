"""Deliver the outbox to Slack: post once, then edit in place; retry what failed, never post twice.

Each posted message carries its outbox target in `metadata`. Before a post the row records that one is
under way, so every later attempt (its answer lost, or the sent mark not written) first looks for the
message in the channel. Card edits are paced (`UpdatePacer`); a paced row simply waits, and since the
outbox keeps one pending row per message, the edit that finally goes shows the latest state.

One bad message never blocks the others. Rows go conversation by conversation (a channel's cards and
threads, one person's replies, App Home), the conversations side by side, so a slow call holds up only
its own. A row Slack refuses for a reason no retry fixes, or that cannot be rendered, is set aside with
its error; only outages (5xx, 429, network errors, timeouts) and malformed answers are retried (rules:
`bot/slack/delivery.py`). A card's thread reads in the order things happened: a reply waits while an
earlier one is pending.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.clock import Clock
from bot.domain.policy import PolicyConfig
from bot.services.home import EVERY_VIEWER
from bot.settings import NotifierConfig
from bot.slack import delivery, render
from bot.slack.delivery import Verdict
from bot.slack.home_loader import load_home
from bot.slack.ids import MetadataEvent
from bot.slack.milestones import Milestone, reached
from bot.slack.pacing import UpdatePacer
from bot.slack.report_loader import build_report_view
from bot.slack.views import approval_card, card_fallback_text
from bot.slack.views.home import home_tab
from bot.slack.views.report import paired_report, report_dm, rerun_button, thread_url
from bot.slack.views.report_csv import report_csv
from bot.slack.views.run_card import RunCardView
from bot.slack.webclient import CALL_TIMEOUT_SECONDS, MalformedAnswer
from bot.store import audit, homes, outbox, requests, runs
from bot.store.db import Store
from bot.store.models import OutboxItem, OutboxKind, RequestState, RunRequest

log = logging.getLogger(__name__)

MAX_MESSAGE_BLOCKS = 50

ROUND_ROWS = 200  # rows a delivery round takes on
LANE_ROWS = 50  # of which at most this many from one conversation
SLACK_TS = re.compile(r"\d+\.\d+")
NOT_IN_CHANNEL_TEXT = (
    "I'm not in this channel, so I can't post the approval card here. "
    "Invite me with `/invite @csb` and run the command again."
)


class _Wait(Exception):
    """Not now, and not a failure: a thread parent not posted yet, or an edit paced for later.

    Without `until`, the row waits with backoff: what it waits for may take long, or never come.
    """

    def __init__(self, until: datetime | None, why: str) -> None:
        super().__init__(why)
        self.until = until


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
        eager: bool = True,
        may_deliver: Callable[[], bool] = lambda: True,
    ) -> None:
        self._store = store
        self._client = client
        self._clock = clock
        self._config = config
        self._policy = policy
        self._repo = repo
        self._eager = eager
        self._may_deliver = may_deliver
        self._pacer = UpdatePacer(
            timedelta(seconds=config.card_update_seconds),
            config.updates_per_minute,
            timedelta(seconds=config.post_interval_seconds),
        )
        self._busy: set[str] = set()  # conversations a delivery round is working through
        self._rounds: set[asyncio.Task[int]] = set()
        # Targets posted by this process whose sent mark is not written yet: never posted again.
        self._posted: dict[str, str] = {}

    def kick(self) -> None:
        """Deliver now instead of at the next tick, so a reply does not wait for the timer.

        Off (`eager=False`) in tests, which call `deliver()` themselves and see every call in order.
        """
        if self._eager and self._may_deliver():
            self.start_round()

    def start_round(self) -> None:
        """A delivery round in the background: the caller (a listener, the timer) never waits on Slack.

        Rounds may overlap; each takes only the conversations no other round is working through.
        """
        task = asyncio.create_task(self._round())
        self._rounds.add(task)
        task.add_done_callback(self._rounds.discard)

    async def close(self) -> None:
        """Let the rounds under way finish (each call is bounded by the client's timeout)."""
        await asyncio.gather(*self._rounds, return_exceptions=True)

    async def _round(self) -> int:
        try:
            return await self.deliver()
        except Exception:
            log.exception("outbox delivery round failed; the next one tries again")
            return 0

    async def deliver(self) -> int:
        """Send every due row and wait for it; returns how many were sent.

        A conversation's rows go one after another, conversations side by side.
        """
        await self._catch_up_milestones()
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
                after = page[-1].id or after
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
        assert listed.id is not None
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
            await self._send(item)
        except _Wait as wait:
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
        self._posted.pop(item.target, None)
        return 1

    async def _send(self, item: OutboxItem) -> None:
        senders = {
            OutboxKind.CARD: self._send_card,
            OutboxKind.STATUS: self._send_card,  # the card is the run's status card
            OutboxKind.SUMMARY: self._send_report,
            OutboxKind.NOTICE: self._send_notice,
            OutboxKind.DM: self._send_dm,
            OutboxKind.EPHEMERAL: self._send_ephemeral,
            OutboxKind.HOME: self._send_home,
            OutboxKind.CARD_COPY: self._send_card_copy,
        }
        await senders[item.kind](item)

    async def _request_of(self, item: OutboxItem) -> RunRequest | None:
        async with self._store.read() as session:
            request_id = item.request_id
            if request_id is None and item.run_id is not None:
                run = await runs.get_run(session, item.run_id)
                request_id = run.request_id if run else None
            return await requests.get_request(session, request_id) if request_id is not None else None

    # -- the card ----------------------------------------------------------------------------------------

    async def _send_card(self, item: OutboxItem) -> None:
        request = await self._request_of(item)
        if request is None or request.id is None:
            return
        now = self._clock.now()
        async with self._store.read() as session:
            loaded = await render.load_card(session, request.id, self._policy, now)
            run = await runs.get_run(session, request.id)
        if loaded is None:
            return
        _, view = loaded
        if view.run is not None and run is not None:
            # Before the edit, which may be paced: a milestone is news when it happens.
            await self._queue_milestones(request.id, view.run, run.infra_failures_total)
        blocks, text = approval_card(view), card_fallback_text(view)
        if request.card_ts:
            wait = self._pacer.not_before(request.card_ts, now)
            if wait is not None:
                raise _Wait(wait, "card edit paced")
            await self._client.chat_update(
                channel=request.channel_id, ts=request.card_ts, text=text, blocks=blocks
            )
            # Stamped when Slack answered, not when we decided: rendering can take a while under load.
            self._pacer.sent(request.card_ts, self._clock.now())
        else:
            ts = await self._post(item, request.channel_id, None, text, blocks)
            async with self._store.write() as session:
                await requests.set_card_ts(session, request.id, ts)
        await self._queue_home_refresh()

    async def _catch_up_milestones(self) -> None:
        """Before a thread reply goes, the milestones its run has reached are queued, each dated when it
        happened, so a report or a pause can never overtake the run's "started"."""
        async with self._store.read() as session:
            threads = await outbox.pending_threads(session, self._clock.now())
        for request_id in threads:
            try:
                async with self._store.read() as session:
                    run = await runs.get_run(session, request_id)
                    card = await render.load_run_card(session, request_id, self._clock.now())
                if run is not None and card is not None:
                    await self._queue_milestones(request_id, card, run.infra_failures_total)
            except Exception:
                log.exception("milestones of run %s could not be brought up to date", request_id)

    async def _queue_milestones(self, request_id: int, run: RunCardView, infra_failures: int) -> None:
        now = self._clock.now()
        milestones = reached(run, infra_failures)
        if run.finished_at is not None:  # the report is the thread's last word; only the start may precede it
            milestones = [m for m in milestones if _is_start(m)]
        async with self._store.write() as session:
            for milestone in milestones:
                if not await outbox.exists(session, milestone.key):
                    await outbox.enqueue(
                        session,
                        kind=OutboxKind.NOTICE,
                        target=milestone.key,
                        now=run.started_at if _is_start(milestone) and run.started_at else now,
                        request_id=request_id,
                        text=milestone.text,
                    )

    # -- App Home ----------------------------------------------------------------------------------------

    async def _queue_home_refresh(self) -> None:
        """A card changed, so someone's home tab may be stale: one coalesced republish for every viewer."""
        async with self._store.write() as session:
            if await homes.viewers(session):
                await outbox.enqueue(
                    session, kind=OutboxKind.HOME, target=EVERY_VIEWER, now=self._clock.now()
                )

    async def _send_home(self, item: OutboxItem) -> None:
        now = self._clock.now()
        wait = self._pacer.not_before(item.target, now)
        if wait is not None:
            raise _Wait(wait, "home refresh paced")
        async with self._store.read() as session:
            users = (
                await homes.viewers(session)
                if item.target == EVERY_VIEWER
                else [item.target.split(":", 1)[1]]
            )
            views = [(u, home_tab(await load_home(session, u, self._policy, now))) for u in users]
        for user_id, view in views:
            await self._client.views_publish(user_id=user_id, view=view)
        self._pacer.sent(item.target, self._clock.now())

    # -- thread replies ----------------------------------------------------------------------------------

    async def _send_report(self, item: OutboxItem) -> None:
        """The paired report, broadcast to the channel; the full table as a CSV when it does not fit."""
        request = await self._request_of(item)
        if request is None or request.id is None:
            return
        thread_ts = _thread_of(request)
        async with self._store.read() as session:
            run = await runs.get_run(session, request.id)
            lanes = await runs.run_lanes(session, request.id)
        assert run is not None
        view = await asyncio.to_thread(build_report_view, self._repo, run, request, lanes)
        message = await asyncio.to_thread(paired_report, view)
        blocks = [*message.blocks, *rerun_button(view)][:MAX_MESSAGE_BLOCKS]
        await self._post(item, request.channel_id, thread_ts, message.text, blocks, broadcast=True)
        if message.csv_needed:
            await self._client.files_upload_v2(
                channel=request.channel_id,
                thread_ts=thread_ts,
                content=await asyncio.to_thread(report_csv, view),
                filename=f"{run.run_dir}_tasks.csv",
                title=f"Run #{run.id}: every task",
            )
        await self._queue_dm(request, message.text)

    async def _queue_dm(self, request: RunRequest, text: str) -> None:
        """Once per run, ever: a report row sent again (its mark lost in a crash) must not DM twice."""
        target = f"dm:finished:{request.id}"
        async with self._store.write() as session:
            if not await outbox.exists(session, target):
                await outbox.enqueue(
                    session,
                    kind=OutboxKind.DM,
                    target=target,
                    now=self._clock.now(),
                    request_id=request.id,
                    text=text,
                )

    async def _send_notice(self, item: OutboxItem) -> None:
        request = await self._request_of(item)
        if request is None:
            return
        thread_ts = _thread_of(request)
        text = item.text or ""
        blocks = [SectionBlock(text=MarkdownTextObject(text=text))]
        await self._post(item, request.channel_id, thread_ts, text, blocks)

    async def _send_dm(self, item: OutboxItem) -> None:
        """To the requester, in the DM that `conversations.open` gives (scope im:write)."""
        request = await self._request_of(item)
        if request is None:
            return
        text, blocks = await self._dm_message(item, request)
        opened = await self._client.conversations_open(users=request.requester)
        channel = (opened.get("channel") or {}).get("id")
        if not isinstance(channel, str) or not channel:
            raise MalformedAnswer("conversations.open answered without the DM's channel id")
        await self._post(item, channel, None, text, blocks)

    async def _dm_message(self, item: OutboxItem, request: RunRequest) -> tuple[str, list[Block]]:
        """A finished run's DM links its thread and carries `Rerun failed`, as under the report."""
        async with self._store.read() as session:
            run = await runs.get_run(session, request.id or 0)
            lanes = await runs.run_lanes(session, request.id or 0)
        if run is None or not request.card_ts or not item.target.startswith("dm:finished:"):
            return item.text or "", [SectionBlock(text=MarkdownTextObject(text=item.text or ""))]
        view = await asyncio.to_thread(build_report_view, self._repo, run, request, lanes)
        return report_dm(view, item.text or "", thread_url(request.channel_id, request.card_ts))

    async def _post(
        self,
        item: OutboxItem,
        channel: str,
        thread_ts: str | None,
        text: str,
        blocks: Sequence[Block],
        *,
        broadcast: bool = False,
    ) -> str:
        """Post, unless an earlier attempt already did and only its answer or its sent mark was lost."""
        assert item.id is not None
        if item.target in self._posted:
            return self._posted[item.target]
        if item.post_attempted_at is not None:
            found = await self._find_posted(channel, thread_ts, item.target)
            if found:
                return found
        now = self._clock.now()
        wait = self._pacer.post_not_before(channel, now)
        if wait is not None:
            raise _Wait(wait, "posts paced per channel")
        async with self._store.write() as session:  # no post without this note: it makes re-sends look first
            await outbox.note_post_attempt(session, item.id, now)
        self._pacer.posted(channel, now)
        response = await self._client.chat_postMessage(
            channel=channel,
            thread_ts=thread_ts,
            reply_broadcast=broadcast or None,
            text=text,
            blocks=blocks,
            metadata={"event_type": MetadataEvent.MESSAGE.value, "event_payload": {"key": item.target}},
        )
        ts = response.get("ts")
        if not isinstance(ts, str) or not SLACK_TS.fullmatch(ts):
            raise MalformedAnswer("chat.postMessage answered without the message's ts")
        self._posted[item.target] = ts
        return ts

    async def _find_posted(self, channel: str, thread_ts: str | None, key: str) -> str | None:
        try:
            if thread_ts:
                response = await self._client.conversations_replies(
                    channel=channel, ts=thread_ts, include_all_metadata=True, limit=200
                )
            else:
                response = await self._client.conversations_history(
                    channel=channel, include_all_metadata=True, limit=100
                )
        except SlackApiError as exc:
            if exc.response.get("error") != "missing_scope":
                raise
            # A DM's history needs im:history, which the app does not ask for: a possible duplicate
            # is better than a message that can never be sent.
            log.warning("cannot look for an earlier post of %s in %s (missing_scope); posting", key, channel)
            return None
        for message in response.get("messages", []):
            if _metadata_key(message) == key:
                return str(message["ts"])
        return None

    # -- ephemeral replies -------------------------------------------------------------------------------

    async def _send_ephemeral(self, item: OutboxItem) -> None:
        if item.response_url is None and item.user_id is not None:
            request = await self._request_of(item)
            if request is not None:
                await self._client.chat_postEphemeral(
                    channel=request.channel_id, user=item.user_id, text=item.text or ""
                )
            return
        url = item.response_url or (await self._request_response_url(item))
        if url is None:
            log.warning("ephemeral reply %s has no response_url; dropped", item.id)
            return
        webhook = AsyncWebhookClient(url, timeout=CALL_TIMEOUT_SECONDS)  # type: ignore[arg-type]
        response = await webhook.send(text=item.text or "", response_type="ephemeral")
        if response.status_code >= 500 or response.status_code == 429:
            raise aiohttp.ClientError(f"response_url answered {response.status_code}")

    async def _send_card_copy(self, item: OutboxItem) -> None:
        assert item.request_id is not None and item.response_url is not None
        async with self._store.read() as session:
            loaded = await render.load_card(session, item.request_id, self._policy, self._clock.now())
        if loaded is None:
            return
        _, view = loaded
        webhook = AsyncWebhookClient(item.response_url, timeout=CALL_TIMEOUT_SECONDS)  # type: ignore[arg-type]
        response = await webhook.send(
            text=card_fallback_text(view), blocks=approval_card(view), response_type="ephemeral"
        )
        if response.status_code >= 500 or response.status_code == 429:
            raise aiohttp.ClientError(f"response_url answered {response.status_code}")

    async def _request_response_url(self, item: OutboxItem) -> str | None:
        request = await self._request_of(item)
        return request.response_url if request else None

    # -- failures ----------------------------------------------------------------------------------------

    async def _failed(self, item: OutboxItem, exc: Exception) -> None:
        """An outage delays a message but never loses it; a malformed answer is retried a few times; a
        refusal or a render that raises sets the row aside (`bot/slack/delivery.py`)."""
        assert item.id is not None
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
        assert item.id is not None
        log.warning("outbox %s (%s, %s) set aside: %s", item.id, item.kind.value, item.target, error)
        self._posted.pop(item.target, None)
        async with self._store.write() as session:
            await outbox.set_aside(session, item.id, error)
            if error == "not_in_channel" and item.kind is OutboxKind.CARD and item.request_id is not None:
                await self._withdraw(session, item.request_id)
                await outbox.enqueue(
                    session,
                    kind=OutboxKind.EPHEMERAL,
                    target=f"ephemeral:{item.target}:not_in_channel",
                    now=self._clock.now(),
                    request_id=item.request_id,
                    text=NOT_IN_CHANNEL_TEXT,
                )
        if item.kind is not OutboxKind.HOME:  # a home tab Slack refuses must not queue itself again
            await self._queue_home_refresh()

    async def _withdraw(self, session: AsyncSession, request_id: int) -> None:
        """A card that cannot be posted cannot be approved: close the request, never leave it pending."""
        request = await requests.get_request(session, request_id)
        now = self._clock.now()
        reason = "the bot is not in the channel, so the card could not be posted"
        if request is not None and await requests.decide(
            session,
            request_id,
            to=RequestState.REJECTED,
            actor="csb-bot",
            now=now,
            revision=request.revision,
            reason=reason,
        ):
            await audit.record(
                session,
                request_id=request_id,
                action="withdrawn",
                actor="csb-bot",
                at=now,
                spec_hash=request.spec_hash,
                revision=request.revision,
                reason=reason,
            )

    def _backoff(self, item: OutboxItem) -> timedelta:
        return outbox.backoff(item.attempts + 1, cap=self._config.max_backoff_seconds)

    async def _postpone(self, item: OutboxItem, until: datetime, error: str, *, count: bool) -> None:
        assert item.id is not None
        attempts = item.attempts + 1 if count else item.attempts
        async with self._store.write() as session:
            await outbox.postpone(session, item.id, attempts=attempts, until=until, error=error)


def _thread_of(request: RunRequest) -> str:
    if not request.card_ts:
        raise _Wait(None, "waiting for the card to be posted")  # which may have been set aside
    return request.card_ts


def _is_start(milestone: Milestone) -> bool:
    return milestone.key.endswith(":started")


def _metadata_key(message: dict[str, Any]) -> str | None:
    metadata = message.get("metadata") or {}
    if metadata.get("event_type") != MetadataEvent.MESSAGE.value:
        return None
    payload = metadata.get("event_payload") or {}
    key = payload.get("key")
    return str(key) if key is not None else None
