"""Typed views of the Slack payloads the listeners receive: parsed once, on the listener's first line."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from bot.domain.errors import UserInputError

# `<row id>` or `<request id>:<revision>`; ASCII digits only (`str.isdigit` accepts `²`, which int() refuses).
_VALUE = re.compile(r"([0-9]{1,12})(?::([0-9]{1,9}))?")
# A row id in modal metadata: ASCII digits that fit a 64-bit integer.
_ROW_ID = re.compile(r"[0-9]{1,18}")


def decision_value(request_id: int, revision: int) -> str:
    """A card button's value: the request and the revision the card shows, so a click on an older
    card is recognised (both numbers are loaded and checked again from the database)."""
    return f"{request_id}:{revision}"


class SlashCommand(BaseModel):
    model_config = ConfigDict(frozen=True)

    user_id: str
    channel_id: str
    text: str
    response_url: str | None = None
    trigger_id: str | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> SlashCommand:
        return cls(
            user_id=body["user_id"],
            channel_id=body["channel_id"],
            text=_unescape(body.get("text", "")),
            response_url=body.get("response_url"),
            trigger_id=body.get("trigger_id"),
        )


class _BlockAction(BaseModel):
    """What every click under a message carries: who, which action, its value, and where to answer."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    action_id: str
    value: str
    action_ts: str = ""
    channel_id: str | None = None
    response_url: str | None = None
    trigger_id: str | None = None

    @staticmethod
    def _fields(body: dict[str, Any], value: str) -> dict[str, Any]:
        action = body["actions"][0]
        return {
            "user_id": body["user"]["id"],
            "action_id": action["action_id"],
            "value": value,
            "action_ts": str(action.get("action_ts", "")),
            "channel_id": (body.get("channel") or {}).get("id"),
            "response_url": body.get("response_url"),
            "trigger_id": body.get("trigger_id"),
        }


class ButtonClick(_BlockAction):
    @classmethod
    def from_body(cls, body: dict[str, Any]) -> ButtonClick:
        return cls(**cls._fields(body, body["actions"][0].get("value", "")))

    @property
    def row_id(self) -> int:
        """Button values are opaque row ids; anything else is a forged or stale click."""
        return int(self._value_parts()[0])

    @property
    def revision(self) -> int | None:
        """The request revision the clicked card showed; None for a button without one."""
        revision = self._value_parts()[1]
        return int(revision) if revision else None

    def _value_parts(self) -> tuple[str, str | None]:
        match = _VALUE.fullmatch(self.value)
        if match is None:
            raise UserInputError("this button is not valid any more")
        return match.group(1), match.group(2)


class OptionChoice(_BlockAction):
    """A choice in a static select under a message: the option's value is `<row id>:<index>`."""

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> OptionChoice:
        chosen = body["actions"][0].get("selected_option") or {}
        return cls(**cls._fields(body, str(chosen.get("value", ""))))

    @property
    def row_and_index(self) -> tuple[int, int]:
        """Anything but `<row id>:<index>` is a forged or stale choice."""
        match = _VALUE.fullmatch(self.value)
        if match is None or match.group(2) is None:
            raise UserInputError("this choice is not valid any more")
        return int(match.group(1)), int(match.group(2))


def _unescape(text: str) -> str:
    """Slack escapes exactly these three characters in a slash command's text; undo that once, here."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class ViewSubmission(BaseModel):
    """A modal's submit: who, which modal, the `<id>:<revision>` it was opened for, and the raw values."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    callback_id: str
    request_id: int
    revision: int
    values: dict[str, dict[str, Any]]

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> ViewSubmission:
        view = body["view"]
        request_id, _, revision = str(view.get("private_metadata", "")).partition(":")
        if not (_ROW_ID.fullmatch(request_id) and _ROW_ID.fullmatch(revision)):
            raise UserInputError("this form is not valid any more; open it again from the card")
        return cls(
            user_id=body["user"]["id"],
            callback_id=view.get("callback_id", ""),
            request_id=int(request_id),
            revision=int(revision),
            values=(view.get("state") or {}).get("values", {}),
        )
