"""One sender per outbox kind: render the message from the current rows, then hand it to Slack.

A sender raises `Wait` when the row must wait (a paced edit, a thread whose card is not posted yet) and
lets any other failure through: what it means for the row is the notifier's to decide.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import aiohttp
from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.csb.counterparts import MANIFEST_PATH
from bot.csb.promotion.manifest_file import ManifestUnreadable
from bot.csb.promotion.official import official_lines
from bot.domain import outbox_keys
from bot.domain.clock import Clock
from bot.domain.policy import PolicyConfig
from bot.domain.promotion import OfficialLine
from bot.domain.slack_limits import MAX_MESSAGE_BLOCKS
from bot.domain.states import RunState
from bot.services.compare import official_comparison, run_side
from bot.services.coverage_args import parse_coverage_args
from bot.services.promotion_gate import card_view
from bot.slack.drawing import in_worker
from bot.slack.outbound import render
from bot.slack.outbound.followups import Followups
from bot.slack.outbound.home_loader import load_home
from bot.slack.outbound.pacing import UpdatePacer, Wait
from bot.slack.outbound.posting import Poster
from bot.slack.outbound.report_loader import build_report_view
from bot.slack.outbound.webclient import CALL_TIMEOUT_SECONDS, MalformedAnswer
from bot.slack.views import approval_card, card_fallback_text
from bot.slack.views.charts import report_chart_csv, report_charts
from bot.slack.views.compare import card_warning, versus_official_line
from bot.slack.views.coverage import coverage_buttons
from bot.slack.views.events import stored_blocks, stored_text
from bot.slack.views.home import home_tab
from bot.slack.views.promotion_card import promotion_card, promotion_card_text
from bot.slack.views.report import ReportView, paired_report, report_dm, rerun_button, thread_url
from bot.slack.views.report_csv import csv_filename, report_csv
from bot.store import homes, promotions, requests, runs
from bot.store.db import Store
from bot.store.records import OutboxItem, OutboxKind, Run, RunRequest

log = logging.getLogger(__name__)


class Senders:
    def __init__(
        self,
        store: Store,
        client: AsyncWebClient,
        clock: Clock,
        policy: PolicyConfig,
        repo: Path,
        pacer: UpdatePacer,
        poster: Poster,
        followups: Followups,
        *,
        alpha: float = 0.05,
    ) -> None:
        self._store = store
        self._client = client
        self._clock = clock
        self._policy = policy
        self._repo = repo
        self._pacer = pacer
        self._poster = poster
        self._followups = followups
        self._alpha = alpha
        self._by_kind: dict[OutboxKind, Callable[[OutboxItem], Awaitable[None]]] = {
            OutboxKind.CARD: self._card,
            OutboxKind.STATUS: self._card,  # the card is the run's status card
            OutboxKind.SUMMARY: self._report,
            OutboxKind.NOTICE: self._notice,
            OutboxKind.DM: self._dm,
            OutboxKind.EPHEMERAL: self._ephemeral,
            OutboxKind.HOME: self._home,
            OutboxKind.CARD_COPY: self._card_copy,
            OutboxKind.PROMOTION: self._promotion,
            OutboxKind.COVERAGE: self._coverage_buttons,
        }

    async def send(self, item: OutboxItem) -> None:
        await self._by_kind[item.kind](item)

    async def _request_of(self, item: OutboxItem) -> RunRequest | None:
        async with self._store.read() as session:
            request_id = item.request_id
            if request_id is None and item.run_id is not None:
                run = await runs.get_run(session, item.run_id)
                request_id = run.request_id if run else None
            return await requests.get_request(session, request_id) if request_id is not None else None

    # -- the card ----------------------------------------------------------------------------------------

    async def _card(self, item: OutboxItem) -> None:
        request = await self._request_of(item)
        if request is None or request.id is None:
            return
        now = self._clock.now()
        async with self._store.read() as session:
            loaded = await render.load_card(session, request.id, self._policy, now)
            run = await runs.get_run(session, runs.run_id_of(request.id))
        if loaded is None:
            return
        _, view = loaded
        if view.run is not None and run is not None:
            # Before the edit, which may be paced: a milestone is news when it happens.
            await self._followups.queue_milestones(request.id, view.run, run.infra_failures_total)
        blocks, text = approval_card(view), card_fallback_text(view)
        if view.run is not None and view.run.state is RunState.FINISHED and run is not None:
            blocks += await self._card_warning(run, request)
        if request.card_ts:
            async with self._pacer.edit(request.card_ts, "card edit paced"):
                await self._client.chat_update(
                    channel=request.channel_id, ts=request.card_ts, text=text, blocks=blocks
                )
        else:
            ts = await self._poster.post(item, request.channel_id, None, text, blocks)
            async with self._store.write() as session:
                await requests.set_card_ts(session, request.id, ts)
        await self._followups.queue_home_refresh()

    async def _card_warning(self, run: Run, request: RunRequest) -> list[Block]:
        """⚠ on a finished run's card when its regressions against official are significant."""
        if not await asyncio.to_thread((self._repo / MANIFEST_PATH).is_file):
            return []  # no reference: nothing to say, and no worker to start for it
        async with self._store.read() as session:
            lanes = await runs.run_lanes(session, run.id)
        versus = await in_worker(official_comparison, self._repo, run_side(run, request, lanes), 0)
        return card_warning(versus, self._alpha) if versus else []

    async def _promotion(self, item: OutboxItem) -> None:
        """A promotion's card, in the channel where it was asked for; edited in place after."""
        async with self._store.read() as session:
            promotion = await promotions.get(session, outbox_keys.promotion_id(item.target))
        if promotion is None:
            return
        view = card_view(promotion, self._policy)
        blocks, text = promotion_card(view), promotion_card_text(view)
        if promotion.card_ts:
            async with self._pacer.edit(promotion.card_ts, "promotion card edit paced"):
                await self._client.chat_update(
                    channel=promotion.channel_id, ts=promotion.card_ts, text=text, blocks=blocks
                )
            return
        ts = await self._poster.post(item, promotion.channel_id, None, text, blocks)
        async with self._store.write() as session:
            await promotions.set_card_ts(session, promotion.id, ts)

    # -- App Home ----------------------------------------------------------------------------------------

    async def _home(self, item: OutboxItem) -> None:
        now = self._clock.now()
        async with self._pacer.edit(item.target, "home refresh paced"):
            async with self._store.read() as session:
                user = outbox_keys.home_user(item.target)
                users = await homes.viewers(session) if user is None else [user]
                tabs = [await load_home(session, u, self._policy, now) for u in users]
            manifest, problem = await self._official()
            views = [
                (h.user_id, home_tab(replace(h, manifest=manifest, manifest_problem=problem))) for h in tabs
            ]
            for user_id, view in views:
                await self._client.views_publish(user_id=user_id, view=view)

    async def _official(self) -> tuple[list[OfficialLine] | None, str | None]:
        """The MANIFEST's lines for App Home (read in a thread), or what is wrong with it."""
        try:
            return await asyncio.to_thread(official_lines, self._repo), None
        except ManifestUnreadable as exc:
            return None, str(exc)

    # -- thread replies ----------------------------------------------------------------------------------

    async def _report(self, item: OutboxItem) -> None:
        """The paired report, broadcast to the channel; the full table as a CSV when it does not fit."""
        request = await self._request_of(item)
        if request is None or request.id is None:
            return
        thread_ts = _thread_of(request)
        async with self._store.read() as session:
            run = await runs.get_run(session, runs.run_id_of(request.id))
            lanes = await runs.run_lanes(session, runs.run_id_of(request.id))
        assert run is not None
        view = await asyncio.to_thread(build_report_view, run, request, lanes)
        message = await asyncio.to_thread(paired_report, view)
        versus = await in_worker(official_comparison, self._repo, run_side(run, request, lanes))
        line = versus_official_line(versus, self._alpha) if versus else None
        extra = [SectionBlock(text=MarkdownTextObject(text=line))] if line else []
        blocks = [*message.blocks, *extra, *rerun_button(view)][:MAX_MESSAGE_BLOCKS]
        text = f"{message.text}\n{line}" if line else message.text
        await self._poster.post(item, request.channel_id, thread_ts, text, blocks, broadcast=True)
        if message.csv_needed:
            await self._client.files_upload_v2(
                channel=request.channel_id,
                thread_ts=thread_ts,
                content=await asyncio.to_thread(report_csv, view),
                filename=csv_filename(view),
                title=f"Run #{run.id}: every task",
            )
        await self._charts(request.channel_id, thread_ts, view)
        await self._followups.queue_dm(request, message.text)

    async def _charts(self, channel: str, thread_ts: str, view: ReportView) -> None:
        """The report's charts, drawn in a worker process, with the numbers they are drawn from as CSV."""
        charts = await in_worker(report_charts, view.run_id, list(view.pairs))
        if not charts:
            return
        uploads = [
            {"file": c.png, "filename": c.filename, "title": c.title, "alt_txt": c.alt_text} for c in charts
        ]
        numbers = await asyncio.to_thread(report_chart_csv, view.pairs)
        uploads.append(
            {"content": numbers, "filename": f"run-{view.run_id}-chart-data.csv", "title": "Chart data"}
        )
        await self._client.files_upload_v2(channel=channel, thread_ts=thread_ts, file_uploads=uploads)

    async def _notice(self, item: OutboxItem) -> None:
        request = await self._request_of(item)
        if request is None:
            return
        thread_ts = _thread_of(request)
        text = stored_text(item.text or "")
        blocks = stored_blocks(item.text or "")
        await self._poster.post(item, request.channel_id, thread_ts, text, blocks)

    async def _dm(self, item: OutboxItem) -> None:
        """To the requester, in the DM that `conversations.open` gives (scope im:write)."""
        request = await self._request_of(item)
        if request is None:
            return
        text, blocks = await self._dm_message(item, request)
        opened = await self._client.conversations_open(users=request.requester)
        channel = (opened.get("channel") or {}).get("id")
        if not isinstance(channel, str) or not channel:
            raise MalformedAnswer("conversations.open answered without the DM's channel id")
        await self._poster.post(item, channel, None, text, blocks)

    async def _dm_message(self, item: OutboxItem, request: RunRequest) -> tuple[str, list[Block]]:
        """A finished run's DM links its thread and carries `Rerun failed`, as under the report."""
        async with self._store.read() as session:
            run = await runs.get_run(session, runs.run_id_of(request.id))
            lanes = await runs.run_lanes(session, runs.run_id_of(request.id))
        if run is None or not request.card_ts or not outbox_keys.is_finished_dm(item.target):
            return item.text or "", [SectionBlock(text=MarkdownTextObject(text=item.text or ""))]
        view = await asyncio.to_thread(build_report_view, run, request, lanes)
        return report_dm(view, item.text or "", thread_url(request.channel_id, request.card_ts))

    # -- ephemeral replies -------------------------------------------------------------------------------

    async def _ephemeral(self, item: OutboxItem) -> None:
        if item.response_url is None and item.user_id is not None:
            request = await self._request_of(item)
            if request is not None:
                await self._client.chat_postEphemeral(
                    channel=request.channel_id, user=item.user_id, text=stored_text(item.text or "")
                )
            return
        url = item.response_url or (await self._request_response_url(item))
        if url is None:
            log.warning("ephemeral reply %s has no response_url; dropped", item.id)
            return
        webhook = AsyncWebhookClient(url, timeout=CALL_TIMEOUT_SECONDS)  # type: ignore[arg-type]
        response = await webhook.send(text=stored_text(item.text or ""), response_type="ephemeral")
        _raise_for_outage(response.status_code)

    async def _card_copy(self, item: OutboxItem) -> None:
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
        _raise_for_outage(response.status_code)

    async def _coverage_buttons(self, item: OutboxItem) -> None:
        """An ephemeral reply carries blocks when sent to its response_url, so the buttons go there."""
        assert item.response_url is not None
        offers = [(parse_coverage_args(value), value) for value in (item.text or "").splitlines()]
        text, blocks = coverage_buttons(offers)
        webhook = AsyncWebhookClient(item.response_url, timeout=CALL_TIMEOUT_SECONDS)  # type: ignore[arg-type]
        response = await webhook.send(text=text, blocks=blocks, response_type="ephemeral")
        _raise_for_outage(response.status_code)

    async def _request_response_url(self, item: OutboxItem) -> str | None:
        request = await self._request_of(item)
        return request.response_url if request else None


def _raise_for_outage(status: int) -> None:
    """A `response_url` that answers 5xx or 429 is an outage: the row is retried."""
    if status >= 500 or status == 429:
        raise aiohttp.ClientError(f"response_url answered {status}")


def _thread_of(request: RunRequest) -> str:
    if not request.card_ts:
        raise Wait(None, "waiting for the card to be posted")  # which may have been set aside
    return request.card_ts
