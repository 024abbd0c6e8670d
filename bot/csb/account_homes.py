"""CSB's Claude account homes (`~/.claude-homes/account*`) and the token each holds, read as CSB's harness
and `fetch_usage.py` read them: for the engine's claims, `/csb accounts` and `csb-bot check` alike."""

from __future__ import annotations

import glob
import os
import re
from datetime import datetime
from pathlib import Path

from bot.csb.json_file import read_json

CREDENTIALS = ".claude/.credentials.json"
CREDENTIALS_LIMIT = 64 * 1024  # a token file is a few hundred bytes
PICK_MIN_MINUTES = 5  # CSB's harness takes an account for a lane only with this much token left


def discover_homes(pattern: str, home: str) -> list[str]:
    """Account homes matching `pattern` (a leading `~` is the bot's HOME) that hold Claude credentials,
    in version order (`account2` before `account10`), as CSB's harness finds them."""
    expanded = home + pattern[1:] if pattern.startswith("~") else pattern
    found = [
        path for path in glob.glob(expanded) if os.path.isdir(path) and Path(path, CREDENTIALS).is_file()
    ]
    return sorted(found, key=_version_key)


def token_minutes(home: str, now: datetime) -> int | None:
    """Whole minutes left on the home's Claude token (floored, never below 0), as CSB reads
    `claudeAiOauth.expiresAt`; None when the home has no readable credentials."""
    try:
        data = read_json(Path(home, CREDENTIALS), CREDENTIALS_LIMIT)
    except (OSError, ValueError):  # absent, unreadable, or not JSON (UnreadableJson)
        return None
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    expires = oauth.get("expiresAt") if isinstance(oauth, dict) else None
    if isinstance(expires, bool) or not isinstance(expires, int | float):
        return None
    return max(0, int((expires / 1000 - now.timestamp()) // 60))


def usable(home: str, now: datetime, *, fallback: bool) -> bool:
    """Whether a lane may start on this home now: an account needs a token with `PICK_MIN_MINUTES` left.

    The bot's own HOME (used when no account home was found) is judged only when it has credentials:
    without any, the agent itself reports what is missing.
    """
    minutes = token_minutes(home, now)
    if minutes is None:
        return fallback and not Path(home, CREDENTIALS).exists()
    return minutes >= PICK_MIN_MINUTES


def account_name(home: str) -> str:
    """How people name an account (`/csb drain-account account2`) and fetch_usage.py keys a folder it has
    no profile for: the home folder's own name."""
    return Path(home).name


def _version_key(path: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", path)]
