"""The Reject modal: a reason is required, and the card shows it."""

from __future__ import annotations

from slack_sdk.models.blocks import InputBlock, PlainTextInputElement
from slack_sdk.models.views import View

from bot.slack.ids import CallbackId

REASON_BLOCK = "reject.reason"
REASON_ACTION = "value"


def reject_modal(request_id: int, revision: int) -> View:
    return View(
        type="modal",
        callback_id=CallbackId.REJECT,
        private_metadata=f"{request_id}:{revision}",
        title="Reject run request",
        submit="Reject",
        close="Cancel",
        blocks=[
            InputBlock(
                block_id=REASON_BLOCK,
                label="Why is this request rejected?",
                hint="The requester sees this on the card.",
                element=PlainTextInputElement(
                    action_id=REASON_ACTION, multiline=True, min_length=3, max_length=500
                ),
            )
        ],
    )
