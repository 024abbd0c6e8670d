"""`response_url`: the per-interaction webhook Bolt's `respond()` posts to.

It works in channels the bot has not joined, which is why the bot answers "invite @csb" through it.
As in Slack, a URL may be used five times; after that it is refused.
"""

from __future__ import annotations

import itertools
import secrets
from dataclasses import dataclass
from typing import Any

from bot.playground.api_error import ApiError
from bot.playground.blockkit_limits import check_message_blocks, message_text_too_long
from bot.playground.workspace import Workspace

MAX_USES = 5


@dataclass(slots=True)
class ResponseTarget:
    """Where answers go: the channel and user of the interaction, and the message clicked, if any."""

    channel: str
    user: str
    message_ts: str | None
    uses: int = 0


class ResponseUrls:
    def __init__(self) -> None:
        self._targets: dict[str, ResponseTarget] = {}
        self._counter = itertools.count(1)

    def issue(self, channel: str, user: str, message_ts: str | None = None) -> str:
        token = f"{next(self._counter)}-{secrets.token_hex(8)}"
        self._targets[token] = ResponseTarget(channel, user, message_ts)
        return token

    def use(self, token: str) -> ResponseTarget:
        target = self._targets.get(token)
        if target is None:
            raise ApiError("invalid_token")
        if target.uses >= MAX_USES:
            raise ApiError("used_url")
        target.uses += 1
        return target


def apply_response(workspace: Workspace, target: ResponseTarget, body: dict[str, Any]) -> None:
    """Do what Slack does with a response_url post: delete or replace the clicked message, or post anew."""
    if body.get("delete_original") and target.message_ts:
        workspace.delete(target.channel, target.message_ts)
        return
    text, blocks = _content(body)
    if body.get("replace_original") and target.message_ts:
        workspace.update(
            target.channel, target.message_ts, text=text or "", blocks=blocks or [], metadata=None
        )
    elif body.get("response_type") == "in_channel":
        workspace.post(
            target.channel,
            user=workspace.bot.user_id,
            text=text or "",
            blocks=blocks,
            thread_ts=body.get("thread_ts"),
        )
    else:
        workspace.post_ephemeral(target.channel, target.user, text or "", blocks, "response_url")


def _content(body: dict[str, Any]) -> tuple[str | None, list[Any] | None]:
    text, blocks = body.get("text"), body.get("blocks")
    if not text and not blocks:
        raise ApiError("no_text")
    if message_text_too_long(text):
        raise ApiError("msg_too_long")
    errors = check_message_blocks(blocks) if blocks is not None else []
    if errors:
        raise ApiError("invalid_blocks", errors=errors)
    return text, blocks
