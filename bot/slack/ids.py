"""Action ids of every interactive element. Button values are opaque row ids, never JSON."""

from __future__ import annotations

from enum import StrEnum


class ActionId(StrEnum):
    APPROVE = "approval.approve"
    REJECT = "approval.reject"
    EDIT = "approval.edit"
    CANCEL = "run.cancel"
    RERUN_FAILED = "run.rerun_failed"
    RUN_REST = "run.run_rest"
    PROMOTE = "run.promote"  # `Promote to official` under a finished staging run's report
    STOP_RETRY = "lane.stop_retry"  # `Stop and retry` on a stalled lane's note; the value is the lane id
    PROMOTION_APPROVE = "promotion.approve"
    PROMOTION_REJECT = "promotion.reject"


class CallbackId(StrEnum):
    """`callback_id` of the bot's modals; `private_metadata` holds only `<request id>:<revision>`."""

    EDIT = "approval.edit_modal"
    REJECT = "approval.reject_modal"
    CANCEL = "run.cancel_modal"  # private_metadata: the run id


class MetadataEvent(StrEnum):
    """`metadata.event_type` of the bot's messages; the payload carries the outbox target as its key."""

    MESSAGE = "csb_bot_message"
