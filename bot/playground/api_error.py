"""The one way a stand-in operation says no: Slack's error code, answered as `{"ok": false, ...}`."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A Web API refusal; `extra` is merged into the reply (e.g. `errors` for `invalid_blocks`)."""

    def __init__(self, error: str, **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.extra = extra

    def to_body(self) -> dict[str, Any]:
        return {"ok": False, "error": self.error, **self.extra}
