"""Action ids of every interactive element. Button values are opaque row ids, never JSON (the coverage
buttons carry the command words they repeat, see below)."""

from __future__ import annotations

from enum import StrEnum


class ActionId(StrEnum):
    APPROVE = "approval.approve"
    REJECT = "approval.reject"
    EDIT = "approval.edit"
    CANCEL = "run.cancel"
    RERUN_FAILED = "run.rerun_failed"
    RUN_REST = "run.run_rest"
    RERUN_TASK = "run.rerun_task"  # `Rerun a task…` under a report: option values `<run id>:<pair index>`
    PROMOTE = "run.promote"  # `Promote to official` under a finished staging run's report
    STOP_RETRY = "lane.stop_retry"  # `Stop and retry` on a stalled lane's note; the value is the lane id
    PROMOTION_APPROVE = "promotion.approve"
    PROMOTION_REJECT = "promotion.reject"
    # Under a `/csb coverage` answer: the value is the `/csb coverage … --fill|--plan` words it repeats
    # (re-parsed and re-authorised at the click), not a row id: an answer is not stored.
    FILL_GAPS = "coverage.fill_gaps"
    PLAN_VARIANCE = "coverage.plan_variance"


class CallbackId(StrEnum):
    """`callback_id` of the bot's modals; `private_metadata` holds only `<request id>:<revision>`."""

    EDIT = "approval.edit_modal"
    REJECT = "approval.reject_modal"
    CANCEL = "run.cancel_modal"  # private_metadata: the run id


class MetadataEvent(StrEnum):
    """`metadata.event_type` of the bot's messages; the payload carries the outbox target as its key."""

    MESSAGE = "csb_bot_message"
