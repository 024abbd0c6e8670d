"""Small text helpers shared by the views."""

from __future__ import annotations

from datetime import datetime

from bot.domain.outcome import LaneStatus
from bot.domain.spec import RunSpec

SECTION_LIMIT = 3000


def user(user_id: str) -> str:
    return f"<@{user_id}>"


def when(at: datetime) -> str:
    """A Slack date token: each reader sees their own time zone, with a UTC fallback."""
    fallback = at.strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{int(at.timestamp())}^{{date_short_pretty}} {{time}}|{fallback}>"


def reward(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def lane_word(status: LaneStatus) -> str:
    return status.value


def suite_text(spec: RunSpec) -> str:
    if spec.params.suite:
        return f"`{spec.params.suite}` from `{spec.task_file}`"
    return f"`{spec.task_file}`"


def chunk_lines(lines: list[str], limit: int = SECTION_LIMIT) -> list[str]:
    """Pack lines into texts of at most `limit` characters (Slack's section text limit)."""
    chunks: list[str] = []
    current = ""
    for line in lines:
        line = line[: limit - 1]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            chunks.append(current)
            candidate = line
        current = candidate
    if current:
        chunks.append(current)
    return chunks
