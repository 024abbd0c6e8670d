"""The card's buttons and modals: Approve, Reject (with a reason), Edit (a new revision)."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.domain.errors import CsbBotError, UserInputError
from bot.domain.mrkdwn import clip
from bot.domain.slack_limits import MAX_LABEL
from bot.services.approvals import ApprovalService
from bot.services.replays import ReplayGuard
from bot.services.reply_queue import ReplyService
from bot.services.requests import RunRequestService
from bot.slack.errors import answering, describe
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.forms import FormErrors, params_from_form, reason_from_form
from bot.slack.inbound.payloads import ButtonClick, ViewSubmission
from bot.slack.views.edit_modal import edit_modal, field_block_id
from bot.slack.views.reject_modal import reject_modal


class DecisionHandler:
    def __init__(
        self,
        approvals: ApprovalService,
        requests: RunRequestService,
        replies: ReplyService,
        directory: Directory,
        client: AsyncWebClient,
        replays: ReplayGuard,
    ) -> None:
        self._replays = replays
        self._approvals = approvals
        self._requests = requests
        self._replies = replies
        self._directory = directory
        self._client = client

    async def approve(self, click: ButtonClick) -> None:
        if not await self._first_time(click):
            return
        await answering(lambda: self._approve(click), lambda text: self._reply(click, text))

    async def _approve(self, click: ButtonClick) -> str | None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(click.row_id, actor, click.channel_id, "approve")
        return (await self._approvals.approve(click.row_id, click.revision, actor)).message

    async def open_reject(self, click: ButtonClick) -> None:
        """Reject asks for a reason first; the request must still be pending."""
        if not await self._first_time(click):
            return
        await answering(lambda: self._open_reject(click), lambda text: self._reply(click, text))

    async def _open_reject(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(click.row_id, actor, click.channel_id, "reject")
        request = await self._requests.load(click.row_id)
        await self._requests.authorize(request, actor, "reject")
        await self._open(click, reject_modal(click.row_id, request.revision).to_dict())

    async def open_edit(self, click: ButtonClick) -> None:
        if not await self._first_time(click):
            return
        await answering(lambda: self._open_edit(click), lambda text: self._reply(click, text))

    async def _open_edit(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(click.row_id, actor, click.channel_id, "edit")
        request = await self._requests.load(click.row_id)
        await self._requests.authorize(request, actor, "edit")
        params = request.spec.params
        await self._open(click, edit_modal(click.row_id, request.revision, params).to_dict())

    async def submit_reject(self, submission: ViewSubmission) -> None:
        """Called after the modal closed (the reason was validated before the ack)."""
        actor = await self._directory.actor(submission.user_id)
        reason = reason_from_form(submission.values)
        decision = await self._approvals.reject(submission.request_id, submission.revision, actor, reason)
        if decision.message:
            await self._replies.ephemeral_in_card(submission.request_id, submission.user_id, decision.message)

    async def submit_edit(self, submission: ViewSubmission) -> None:
        actor = await self._directory.actor(submission.user_id)
        params = params_from_form(submission.values)
        try:
            await self._requests.edit(submission.request_id, submission.revision, params, actor)
        except CsbBotError as exc:
            await self._replies.ephemeral_in_card(submission.request_id, submission.user_id, describe(exc))

    async def validate_edit(self, submission: ViewSubmission) -> dict[str, str] | None:
        """Field errors to keep the modal open with, checked before the ack; None when it may close."""
        try:
            params = params_from_form(submission.values)
            await self._requests.resolve(params)
        except FormErrors as exc:
            return exc.errors
        except CsbBotError as exc:
            return {_field_for(str(exc)): clip(describe(exc), MAX_LABEL)}
        return None

    @staticmethod
    def validate_reject(submission: ViewSubmission) -> dict[str, str] | None:
        try:
            reason_from_form(submission.values)
        except FormErrors as exc:
            return exc.errors
        return None

    async def _first_time(self, click: ButtonClick) -> bool:
        """A replayed signed click (same user, element and action_ts) is ignored."""
        return await self._replays.first_time(click.user_id, click.action_id, click.action_ts)

    async def _open(self, click: ButtonClick, view: dict[str, object]) -> None:
        await self._client.views_open(trigger_id=click.trigger_id, view=view)

    async def _reply(self, click: ButtonClick, text: str | None) -> None:
        """Clicks on the card answer through its response_url; App Home clicks have none."""
        if not text:
            return
        if click.response_url:
            await self._replies.ephemeral(click.response_url, text)
        else:
            try:
                request_id = click.row_id
            except UserInputError:
                return  # a forged value: no card to answer in
            await self._replies.ephemeral_in_card(request_id, click.user_id, text)


def _field_for(message: str) -> str:
    """Put a resolution error under the input it most likely concerns."""
    for field, words in (("suite", "suite"), ("full_config", "config"), ("parallel", "parallel")):
        if words in message:
            return field_block_id(field)
    return field_block_id("model")
