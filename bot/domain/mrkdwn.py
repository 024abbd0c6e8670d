"""Slack's mrkdwn escaping, in one place for the views and for the thread texts services write.

Slack turns `<!channel>`, `<@U…>` and `<https://x|label>` into live mentions and links anywhere in
mrkdwn, even inside backticks; escaped, what a user typed shows exactly as typed.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
# A cut must not leave half an entity (`&am`) or half a `<…>` token, which Slack would show or parse.
_OPEN_TAIL = re.compile(r"(&[a-z]{0,3}|<[^>]*)$")


def escape(text: str) -> str:
    """Slack's three escapes (`&`, `<`, `>`); the only markup a user's text can carry is then none."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending in "…" when cut (never mid-entity or mid-token)."""
    if len(text) <= limit:
        return text
    return _OPEN_TAIL.sub("", text[: limit - len(ELLIPSIS)]) + ELLIPSIS
