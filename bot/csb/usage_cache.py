"""CSB's usage cache (`~/.claude-usage/usage_cache.json`, written by `scripts/infra/fetch_usage.py`): the
one reader of it, for `/csb accounts` and the engine's choice of accounts.

The file is `{"accounts": [entry, …], "fetched_at": ISO}`; an entry is keyed by `name` (the profile
name, or the account folder's name `accountN` for a folder the script has no profile for) and holds
`five_hour` and `seven_day` as `{"utilization": <percent, 1 dp>, "resets_at": ISO | null}` or null,
its own `fetched_at` and an `error` ("token expired", "no usage headers", …). Whatever the file holds,
reading it never raises: what cannot be used is an "unknown" with the reason, and the engine treats
an unknown utilisation as no reason to avoid an account (nothing is held back by a broken file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.csb.json_file import UnreadableJson, read_json

USAGE_CACHE = "~/.claude-usage/usage_cache.json"  # fetch_usage.py's USAGE_CACHE
CACHE_LIMIT = 1024 * 1024  # a cache of a few accounts is a few kilobytes
WINDOWS = ("five_hour", "seven_day")


@dataclass(frozen=True)
class Window:
    """One rate-limit window of an account: its utilisation in percent, and when it resets."""

    utilization: float
    resets_at: datetime | None = None


@dataclass(frozen=True)
class AccountUsage:
    """An account's entry in the cache; `unknown` says why its figures cannot be used (None: they can)."""

    five_hour: Window | None = None
    seven_day: Window | None = None
    fetched_at: datetime | None = None
    unknown: str | None = None

    def highest(self) -> float | None:
        """The higher of the two utilisations, or None when neither is known."""
        known = [w.utilization for w in (self.five_hour, self.seven_day) if w is not None]
        return max(known) if known and self.unknown is None else None


@dataclass(frozen=True)
class UsageCache:
    """The cache as read at `now`: `problem` is why none of it can be used (absent, not JSON, another
    shape, stale); `age` is how old its `fetched_at` is."""

    path: Path
    problem: str | None = None
    fetched_at: datetime | None = None
    age: timedelta | None = None
    stale: bool = False
    accounts: Mapping[str, AccountUsage] = field(default_factory=dict)
    absent: bool = False  # the checkout's user keeps no cache: nothing to show, nothing wrong

    def usage(self, account_name: str) -> AccountUsage:
        """The account's figures to choose accounts by, keyed by the name fetch_usage.py gives a folder
        without a profile; unknown when the cache cannot be used (stale included)."""
        if self.problem is not None:
            return AccountUsage(unknown=self.problem)
        return self.shown(account_name)

    def shown(self, account_name: str) -> AccountUsage:
        """The figures to show: a stale cache's too (labelled stale by the view), never a broken one's."""
        if self.problem is not None and not self.stale:
            return AccountUsage(unknown=self.problem)
        found = self.accounts.get(account_name)
        if found is None:
            return AccountUsage(unknown=f"no entry named `{account_name}` in the usage cache")
        return found


def cache_path(setting: str, home: str) -> Path:
    """The configured path, a leading `~` being the bot's HOME (the checkout's user, as CSB's scripts)."""
    return Path(home + setting[1:] if setting.startswith("~") else setting)


def read_usage_cache(path: Path, now: datetime, stale_after: timedelta) -> UsageCache:
    """The cache as it is now; never raises (a file CSB's script or a person broke reads as unknown)."""
    try:
        data = read_json(path, CACHE_LIMIT)
    except FileNotFoundError:
        return UsageCache(path=path, problem="no usage cache", absent=True)
    except OSError as exc:
        return UsageCache(path=path, problem=f"the usage cache cannot be read: {exc.strerror or exc}")
    except UnreadableJson as exc:
        return UsageCache(path=path, problem=f"the usage cache {exc}")
    if not isinstance(data, dict) or not isinstance(data.get("accounts"), list):
        return UsageCache(
            path=path, problem="the usage cache is not fetch_usage.py's shape (no `accounts` list)"
        )
    fetched_at = _time(data.get("fetched_at"))
    if fetched_at is None:
        return UsageCache(path=path, problem="the usage cache has no readable `fetched_at` time")
    age = now - fetched_at
    accounts = dict(_entries(data["accounts"]))
    if age > stale_after:
        why = f"the usage cache is stale: fetched {_minutes(age)} ago, older than {_minutes(stale_after)}"
        return UsageCache(
            path=path, problem=why, fetched_at=fetched_at, age=age, stale=True, accounts=accounts
        )
    return UsageCache(path=path, fetched_at=fetched_at, age=age, accounts=accounts)


def _entries(entries: list[Any]) -> list[tuple[str, AccountUsage]]:
    found = []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"]:
            found.append((entry["name"], _entry(entry)))
    return found


def _entry(entry: Mapping[str, Any]) -> AccountUsage:
    fetched_at = _time(entry.get("fetched_at"))
    error = entry.get("error")
    if isinstance(error, str) and error:
        return AccountUsage(fetched_at=fetched_at, unknown=f"fetch_usage.py: {error[:200]}")
    windows = {name: _window(entry.get(name)) for name in WINDOWS}
    if any(isinstance(w, str) for w in windows.values()):
        bad = next(name for name, w in windows.items() if isinstance(w, str))
        return AccountUsage(fetched_at=fetched_at, unknown=f"its `{bad}` is not fetch_usage.py's shape")
    five, seven = (w if isinstance(w, Window) else None for w in windows.values())
    if five is None and seven is None:
        return AccountUsage(fetched_at=fetched_at, unknown="no utilisation in its entry")
    return AccountUsage(five_hour=five, seven_day=seven, fetched_at=fetched_at)


def _window(value: Any) -> Window | str | None:
    """A window, None when the entry has none, or a string when it is of another shape."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return "bad"
    utilization = value.get("utilization")
    if isinstance(utilization, bool) or not isinstance(utilization, int | float) or utilization < 0:
        return "bad"
    return Window(utilization=float(utilization), resets_at=_time(value.get("resets_at")))


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _minutes(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
