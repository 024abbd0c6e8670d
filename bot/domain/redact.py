"""Secrets out of text that comes from elsewhere (CSB's scripts, Harbor's logs) before it is stored or shown.

A failing script's stderr may print the very token it was given; that text would otherwise reach the
request's card and the database. The values to hide are every secret the bot holds (its secret
settings, the database password, a password in the Ray head's URL) and every environment variable
whose name says it holds a secret. `outside_text` is the one way such text enters Slack's mrkdwn.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping

from bot.domain.mrkdwn import clip, escape

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


class RedactingFilter(logging.Filter):
    """Log records with the bot's secrets replaced (message, arguments and traceback), for the handlers
    of a running bot: a log line may quote a script's output, a URL or an exception's text."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self._redact(record.getMessage()), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        return True


def outside_text(text: str, redact: Redactor, limit: int) -> str:
    """Text a file or a script wrote, as a Slack message may carry it: the bot's secrets out first (so no
    cut leaves half of one), cut to `limit`, then escaped (no live `<!channel>`, mention or link)."""
    return escape(clip(redact(text), limit))


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)


def _forms(value: str) -> set[str]:
    """The value as printed, and as it appears inside a JSON string (a script's JSON report)."""
    return {value, value.strip(), json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
