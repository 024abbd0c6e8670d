"""Secrets out of text that comes from elsewhere (CSB's preflight scripts) before it is stored or shown.

A failing script's stderr may print the very token it was given; that text would otherwise reach the
request's card and the database. The values to hide are the bot's own secret settings and every
environment variable whose name says it holds a secret.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "KEY")
# Shorter values ("1", "yes") are flags, not secrets; replacing them would garble every message.
MIN_SECRET_LENGTH = 4


class Redactor:
    """Replaces each known secret value (and its JSON-escaped form) with `[redacted]`."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        forms = {form for value in secrets for form in _forms(value) if len(form) >= MIN_SECRET_LENGTH}
        self._values = sorted(forms, key=len, reverse=True)  # a secret inside a longer one goes last

    @classmethod
    def from_env(cls, env: Mapping[str, str], extra: Iterable[str] = ()) -> Redactor:
        """Secrets named in `env` (TOKEN, SECRET, PASSWORD or KEY in the name) plus `extra` values."""
        named = [value for name, value in env.items() if is_secret_name(name)]
        return cls([*named, *extra])

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)


def _forms(value: str) -> set[str]:
    """The value as printed, and as it appears inside a JSON string (a script's JSON report)."""
    return {value, value.strip(), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
