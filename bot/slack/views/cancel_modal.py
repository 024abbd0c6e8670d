"""The Cancel modal: stop now or drain, and a required reason that goes into the audit trail."""

from __future__ import annotations

from slack_sdk.models.blocks import (
    InputBlock,
    MarkdownTextObject,
    Option,
    PlainTextInputElement,
    RadioButtonsElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from bot.domain.words import plural
from bot.slack.ids import CallbackId
from bot.slack.views.format import code

MODE_BLOCK = "cancel.mode"
MODE_ACTION = "value"
REASON_BLOCK = "cancel.reason"
REASON_ACTION = "value"
MODE_CANCEL = "cancel"
MODE_DRAIN = "drain"


def cancel_modal(run_id: int, run_dir: str, running: int, queued: int) -> View:
    stop_now = Option(
        value=MODE_CANCEL,
        text="Cancel: stop running lanes now",
        description="SIGINT, then SIGKILL after the grace period; queued lanes are dropped",
    )
    drain = Option(
        value=MODE_DRAIN,
        text="Drain: let running lanes finish",
        description="No new pairs start; queued lanes are dropped",
    )
    return View(
        type="modal",
        callback_id=CallbackId.CANCEL,
        private_metadata=str(run_id),
        title="Cancel run",
        submit="Stop the run",
        close="Keep running",
        blocks=[
            SectionBlock(
                text=MarkdownTextObject(
                    text=f"*Run #{run_id}* {code(run_dir)}: "
                    f"{plural(running, 'lane')} running, {queued} queued."
                )
            ),
            InputBlock(
                block_id=MODE_BLOCK,
                label="How",
                element=RadioButtonsElement(
                    action_id=MODE_ACTION, options=[stop_now, drain], initial_option=stop_now
                ),
            ),
            InputBlock(
                block_id=REASON_BLOCK,
                label="Why?",
                hint="Recorded in the audit trail and posted in the run's thread.",
                element=PlainTextInputElement(
                    action_id=REASON_ACTION, multiline=True, min_length=3, max_length=500
                ),
            ),
        ],
    )
