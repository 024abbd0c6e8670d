"""What a Web API method handler may touch: the workspace, the views and the cast."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.playground.api_args import Args
from bot.playground.api_error import ApiError
from bot.playground.blockkit_limits import check_message_blocks, message_text_too_long
from bot.playground.files_store import FileStore
from bot.playground.surfaces import Surfaces
from bot.playground.users import PlayUser
from bot.playground.workspace import Workspace


@dataclass(frozen=True, slots=True)
class ApiContext:
    workspace: Workspace
    surfaces: Surfaces
    users: Mapping[str, PlayUser]
    files: FileStore

    def user(self, user_id: str | None) -> PlayUser:
        if user_id is None or user_id not in self.users:
            raise ApiError("user_not_found")
        return self.users[user_id]


Handler = Callable[[ApiContext, Args], dict[str, Any]]


def invalid_blocks(errors: list[str]) -> ApiError:
    """Slack's answer to a payload over a Block Kit limit: every error, also as `[ERROR]` messages."""
    return ApiError(
        "invalid_blocks", errors=errors, response_metadata={"messages": [f"[ERROR] {e}" for e in errors]}
    )


def message_content(args: Args, require: bool = True) -> tuple[str | None, list[Any] | None]:
    """`text` and `blocks` of a message, refused as Slack refuses them (`no_text`, `msg_too_long`, …)."""
    text = args.optional("text")
    blocks = args.parsed("blocks", error="invalid_blocks_format")
    if require and text is None and not blocks:
        raise ApiError("no_text")
    if message_text_too_long(text):
        raise ApiError("msg_too_long")
    if blocks is not None:
        errors = check_message_blocks(blocks)
        if errors:
            raise invalid_blocks(errors)
    return text, blocks


def message_metadata(args: Args) -> dict[str, Any] | None:
    """`metadata` must be `{event_type: str, event_payload: object}`; the bot's idempotency key rides here."""
    metadata = args.parsed("metadata", error="invalid_metadata_format")
    if metadata is None:
        return None
    if (
        not isinstance(metadata, dict)
        or not isinstance(metadata.get("event_type"), str)
        or not isinstance(metadata.get("event_payload", {}), dict)
    ):
        raise ApiError("invalid_metadata_format")
    return {"event_type": metadata["event_type"], "event_payload": metadata.get("event_payload", {})}
