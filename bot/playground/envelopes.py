"""What travels on a Socket Mode connection: the envelope Slack sends, the ack it waits for, and the
record the stand-in keeps of both (`socket_mode.py` serves them)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

# Slack's `retry_reason` values, as its Events API retries name them.
TIMEOUT = "timeout"
CONNECTION_LOST = "connection_failed"
ENVELOPE_TYPES = ("slash_commands", "interactive", "events_api")


@dataclass(frozen=True, slots=True)
class Ack:
    """An envelope's ack as the stand-in received it. `seconds` runs from the envelope's first send."""

    envelope_id: str
    payload: dict[str, Any] | None
    seconds: float
    attempts: int
    connection: int


@dataclass(frozen=True, slots=True)
class Delivery:
    """One send of an envelope: which connection got it, and the retry fields it carried."""

    envelope_id: str
    type: str
    connection: int
    retry_attempt: int
    retry_reason: str


@dataclass
class Envelope:
    """One slash command, interaction or event, however many times it is sent; acked once."""

    id: str
    type: str
    payload: dict[str, Any]
    accepts_response_payload: bool
    acked: asyncio.Future[Ack]
    attempts: int = 0
    reason: str = ""
    first_sent: float | None = None

    def message(self) -> dict[str, Any]:
        """The JSON Slack sends; an event carries its retry fields from the first send, as Slack's do."""
        body: dict[str, Any] = {
            "envelope_id": self.id,
            "type": self.type,
            "payload": self.payload,
            "accepts_response_payload": self.accepts_response_payload,
        }
        if self.type == "events_api" or self.attempts > 1:
            body.update(retry_attempt=self.attempts - 1, retry_reason=self.reason)
        return body


def accepts_response_payload(type: str, payload: dict[str, Any]) -> bool:
    """Slash commands and modal submissions (and option loads) may answer in the ack; clicks and events
    may not."""
    if type == "slash_commands":
        return True
    return type == "interactive" and payload.get("type") in ("view_submission", "block_suggestion")
