"""Typed reads of a Web API call's arguments, whichever way the client encoded them.

slack_sdk sends chat.* and views.* as JSON, conversations.* as query or form fields, where lists
and objects arrive as JSON strings and booleans as "true"/"1". Handlers should not care which.
"""

from __future__ import annotations

import json
from typing import Any

from bot.playground.api_error import ApiError

_TRUE = {"true", "1", "yes"}


class Args:
    """The merged query, form and JSON arguments of one call, minus the token."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def required(self, key: str, error: str = "invalid_arguments") -> str:
        value = self.values.get(key)
        if value is None or value == "":
            raise ApiError(error)
        return str(value)

    def optional(self, key: str) -> str | None:
        value = self.values.get(key)
        return None if value is None or value == "" else str(value)

    def flag(self, key: str) -> bool:
        value = self.values.get(key)
        if isinstance(value, bool):
            return value
        return str(value).lower() in _TRUE if value is not None else False

    def number(self, key: str, default: int) -> int:
        value = self.values.get(key)
        if value is None or value == "":
            return default
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise ApiError("invalid_arguments") from exc

    def parsed(self, key: str, error: str = "invalid_arguments") -> Any:
        """A list/object argument; form bodies carry these as JSON text."""
        value = self.values.get(key)
        if not isinstance(value, str):
            return value
        if value == "":
            return None
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise ApiError(error) from exc
