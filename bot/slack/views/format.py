"""Small text functions shared by the views: escaping, cutting to Slack's limits, dates and plurals.

Every string a user typed or a file supplied goes through `shown` (or `escape`) before it enters
mrkdwn: Slack turns `<!channel>` and `<https://x|label>` into a live mention and link even inside
backticks. Every text is cut to the limit of the place it goes (`clip`), so no view is ever refused.
"""

from __future__ import annotations

from datetime import datetime

from bot.domain.mrkdwn import clip as clip  # re-exported: the views cut and escape through this module
from bot.domain.mrkdwn import escape as escape
from bot.domain.slack_limits import MAX_FIELD_TEXT, MAX_MESSAGE_TEXT, MAX_SECTION_TEXT
from bot.domain.spec import RunSpec

# The limits of the places a view's text goes (`bot/domain/slack_limits.py`), by the names the views use.
SECTION_LIMIT = MAX_SECTION_TEXT
FIELD_LIMIT = MAX_FIELD_TEXT
CONTEXT_LIMIT = MAX_FIELD_TEXT  # a context element's text: kept to a field's, well inside a section's
MESSAGE_TEXT_LIMIT = MAX_MESSAGE_TEXT
VALUE_LIMIT = 300  # one user-supplied value inline (model, path, reason on a card line)


def shown(value: str, limit: int = VALUE_LIMIT) -> str:
    """A user-supplied value for mrkdwn: cut to `limit` characters as typed, then escaped."""
    return escape(clip(value, limit))


def code(value: str, limit: int = VALUE_LIMIT) -> str:
    """A value in backticks (copyable); a backtick inside would end the code span, so it becomes ʼ."""
    return f"`{shown(value.replace('`', 'ʼ'), limit)}`"


def user(user_id: str) -> str:
    return f"<@{user_id}>"


def when(at: datetime) -> str:
    """A Slack date token: each reader sees their own time zone, with a UTC fallback."""
    fallback = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"


def reward(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def suite_text(spec: RunSpec) -> str:
    if spec.params.suite:
        return f"{code(spec.params.suite)} from {code(spec.task_file)}"
    return code(spec.task_file)


def chunk_lines(lines: list[str], limit: int = SECTION_LIMIT) -> list[str]:
    """Pack lines into texts of at most `limit` characters (Slack's section text limit)."""
    chunks: list[str] = []
    current = ""
    for line in lines:
        line = clip(line, limit)
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            candidate = line
        current = candidate
    if current:
        chunks.append(current)
    return chunks
