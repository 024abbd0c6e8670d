"""Action ids of every interactive element. Button values are opaque row ids, never JSON."""

from __future__ import annotations

from enum import StrEnum


class ActionId(StrEnum):
    APPROVE = "approval.approve"
    REJECT = "approval.reject"


class MetadataEvent(StrEnum):
    """`metadata.event_type` of the bot's messages; the payload carries the outbox target as its key."""

    MESSAGE = "csb_bot_message"
