"""`Cancel` on the status card (a modal asks how and why), `Rerun failed`, `Run the rest` and
`Rerun a task…` on the final report, and `Stop and retry` on a stalled lane's note."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.domain.errors import CsbBotError, UserInputError
from bot.domain.limits import REASON_CHARS
from bot.domain.states import LaneStatus
from bot.services.control_args import CATEGORY_A
from bot.services.lane_restart import LaneRestartService
from bot.services.replays import ReplayGuard
from bot.services.reply_queue import ReplyService
from bot.services.requests import RunRequestService
from bot.services.run_control import RunControlService
from bot.services.task_rerun import TaskRerunService
from bot.slack.errors import answering, describe
from bot.slack.ids import ActionId, CallbackId
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.listeners.prologue import Prologue
from bot.slack.inbound.payloads import ButtonClick, OptionChoice
from bot.slack.views.cancel_modal import (
    MODE_ACTION,
    MODE_BLOCK,
    MODE_DRAIN,
    REASON_ACTION,
    REASON_BLOCK,
    cancel_modal,
)
from bot.store.runs import request_id_of


class CancelSubmission(BaseModel):
    """The Cancel modal's submit: `private_metadata` holds only the run id."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    run_id: int
    drain: bool
    reason: str

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> CancelSubmission:
        view = body["view"]
        run_id = str(view.get("private_metadata", ""))
        if not run_id.isdigit():
            raise UserInputError("this form is not valid any more; click Cancel on the run again")
        values = (view.get("state") or {}).get("values", {})
        mode = ((values.get(MODE_BLOCK) or {}).get(MODE_ACTION) or {}).get("selected_option") or {}
        reason = ((values.get(REASON_BLOCK) or {}).get(REASON_ACTION) or {}).get("value") or ""
        return cls(
            user_id=body["user"]["id"],
            run_id=int(run_id),
            drain=mode.get("value") == MODE_DRAIN,
            reason=" ".join(str(reason).split()),
        )


class RunControlClicks:
    """What the buttons and the modal do, each failure turned into words for the clicker."""

    def __init__(
        self,
        control: RunControlService,
        replies: ReplyService,
        directory: Directory,
        client: AsyncWebClient,
        replays: ReplayGuard,
        requests: RunRequestService,
        task_reruns: TaskRerunService,
        restarts: LaneRestartService,
    ) -> None:
        self._task_reruns = task_reruns
        self._restarts = restarts
        self._replays = replays
        self._requests = requests  # who may act from where: the rule of `/csb status`
        self._control = control
        self._replies = replies
        self._directory = directory
        self._client = client

    async def open_cancel(self, click: ButtonClick) -> None:
        """Authorise at click time, then ask how and why; a refusal names who may."""
        if not await self._first_time(click):
            return
        await answering(
            lambda: self._open_cancel(click), lambda text: self._replies.ephemeral(click.response_url, text)
        )

    async def _open_cancel(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(request_id_of(click.row_id), actor, click.channel_id, "cancel")
        target = await self._control.stop_target(click.row_id, actor)
        view = cancel_modal(target.run_id, target.run_dir, target.running, target.queued)
        await self._client.views_open(trigger_id=click.trigger_id or "", view=view.to_dict())

    async def validate_cancel(self, form: CancelSubmission) -> dict[str, str] | None:
        """Errors that keep the modal open (checked before the ack: a quick read); None when it may close."""
        if len(form.reason) < 3:
            return {REASON_BLOCK: "Say why the run is stopped (at least 3 characters)."}
        if len(form.reason) > REASON_CHARS:
            return {REASON_BLOCK: f"At most {REASON_CHARS} characters; this is {len(form.reason):,}."}
        try:
            await self._control.stop_target(form.run_id, await self._directory.actor(form.user_id))
        except CsbBotError as exc:
            return {REASON_BLOCK: describe(exc)}
        return None

    async def submit_cancel(self, form: CancelSubmission) -> None:
        actor = await self._directory.actor(form.user_id)
        try:
            await self._control.cancel(form.run_id, actor, form.reason, drain=form.drain)
        except CsbBotError as exc:  # e.g. the run ended between the check and the submit
            await self._replies.ephemeral_in_card(request_id_of(form.run_id), form.user_id, describe(exc))

    async def rerun_failed(self, click: ButtonClick) -> None:
        """A new request over the run's tasks whose lanes failed of a cause a rerun as is can fix (CSB's
        category A: rate limits, expired tokens, lost trials, …); its card is the answer."""
        if not await self._first_time(click):
            return
        await answering(
            lambda: self._rerun_failed(click), lambda text: self._replies.ephemeral(click.response_url, text)
        )

    async def _rerun_failed(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(request_id_of(click.row_id), actor, click.channel_id, "rerun")
        await self._control.rerun(
            click.row_id,
            actor,
            only=(),
            causes=CATEGORY_A,
            channel_id=click.channel_id or "",
            response_url=click.response_url,
            trigger_id=click.trigger_id,
        )

    async def rerun_task(self, choice: OptionChoice) -> None:
        """`Rerun a task…`: the request `/csb run --tasks <it> --suite <its suite>` would make with the
        run's parameters; its card is the answer."""
        if not await self._replays.first_time(choice.user_id, choice.action_id, choice.action_ts):
            return
        await answering(
            lambda: self._rerun_task(choice), lambda text: self._replies.ephemeral(choice.response_url, text)
        )

    async def _rerun_task(self, choice: OptionChoice) -> None:
        run_id, index = choice.row_and_index
        actor = await self._directory.actor(choice.user_id)
        await self._requests.authorize_sight(request_id_of(run_id), actor, choice.channel_id, "rerun")
        await self._task_reruns.rerun_task(
            run_id,
            index,
            actor,
            channel_id=choice.channel_id or "",
            response_url=choice.response_url,
            trigger_id=choice.trigger_id,
        )

    async def run_rest(self, click: ButtonClick) -> None:
        """A new request over the tasks of a cancelled or drained run that have a lane that never ran to
        an end; its card is the answer."""
        if not await self._first_time(click):
            return
        await answering(
            lambda: self._run_rest(click), lambda text: self._replies.ephemeral(click.response_url, text)
        )

    async def _run_rest(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        await self._requests.authorize_sight(request_id_of(click.row_id), actor, click.channel_id, "rerun")
        await self._control.rerun(
            click.row_id,
            actor,
            only=(LaneStatus.CANCELLED,),
            channel_id=click.channel_id or "",
            response_url=click.response_url,
            trigger_id=click.trigger_id,
        )

    async def stop_and_retry(self, click: ButtonClick) -> None:
        """`Stop and retry` on a stalled lane's note (its value the lane id): for whoever may cancel the
        run, from where they may see it; the thread note that follows is the answer."""
        if not await self._first_time(click):
            return
        await answering(
            lambda: self._stop_and_retry(click),
            lambda text: self._replies.ephemeral(click.response_url, text),
        )

    async def _stop_and_retry(self, click: ButtonClick) -> None:
        actor = await self._directory.actor(click.user_id)
        request_id = await self._restarts.request_of(click.row_id)
        await self._requests.authorize_sight(request_id, actor, click.channel_id, "stop and retry a lane")
        await self._restarts.stop_and_retry(click.row_id, actor)

    async def _first_time(self, click: ButtonClick) -> bool:
        """A replayed signed click (same user, element and action_ts) is ignored."""
        return await self._replays.first_time(click.user_id, click.action_id, click.action_ts)


def register(app: AsyncApp, clicks: RunControlClicks, listen: Prologue) -> None:
    @app.action(ActionId.CANCEL.value)
    async def on_cancel(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.open_cancel(ButtonClick.from_body(body)), at_once=True)

    @app.view(CallbackId.CANCEL.value)
    async def on_cancel_submit(ack: AsyncAck, body: dict[str, Any]) -> None:
        form = CancelSubmission.from_body(body)
        await listen.submit(
            ack, body, lambda: clicks.validate_cancel(form), lambda: clicks.submit_cancel(form)
        )

    @app.action(ActionId.RERUN_FAILED.value)
    async def on_rerun_failed(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.rerun_failed(ButtonClick.from_body(body)))

    @app.action(ActionId.RERUN_TASK.value)
    async def on_rerun_task(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.rerun_task(OptionChoice.from_body(body)))

    @app.action(ActionId.STOP_RETRY.value)
    async def on_stop_retry(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.stop_and_retry(ButtonClick.from_body(body)))

    @app.action(ActionId.RUN_REST.value)
    async def on_run_rest(ack: AsyncAck, body: dict[str, Any]) -> None:
        await listen.run(ack, body, lambda: clicks.run_rest(ButtonClick.from_body(body)))
