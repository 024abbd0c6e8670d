"""CSB's usage cache (`fetch_usage.py`'s) read whatever it holds, and the rule that keeps new lanes off
accounts too busy by it: unknown never holds an account back."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.csb.usage_cache import AccountUsage, Window, cache_path, read_usage_cache
from bot.services.account_hold import over_utilization, utilization_detail, why_held
from bot.store.records import Account

FIXTURE = Path(__file__).parent / "fixtures" / "csb" / "usage_cache.json"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # five minutes after the fixture was fetched
HOUR = timedelta(hours=1)


def test_the_real_shape_gives_each_account_its_five_hour_and_seven_day_utilisation(tmp_path: Path) -> None:
    cache = read_usage_cache(FIXTURE, NOW, HOUR)
    assert cache.problem is None and not cache.stale and not cache.absent
    assert cache.age is not None and timedelta(minutes=4) < cache.age < timedelta(minutes=5)
    first = cache.usage("account1")
    assert first.five_hour == Window(97.0, datetime(2026, 12, 1, 14, 0, tzinfo=UTC))
    assert first.seven_day is not None and first.seven_day.utilization == 41.5
    assert first.highest() == 97.0
    second = cache.usage("account2")
    assert second.seven_day == Window(60.0, None) and second.highest() == 60.0
    expired = cache.usage("account3")
    assert expired.unknown == "fetch_usage.py: token expired" and expired.highest() is None
    assert cache.usage("account9").unknown == "no entry named `account9` in the usage cache"


def test_no_cache_is_absent_not_an_error(tmp_path: Path) -> None:
    cache = read_usage_cache(tmp_path / "usage_cache.json", NOW, HOUR)
    assert cache.absent and cache.usage("account1").highest() is None


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "the usage cache is not valid JSON"),
        ('{"accounts": [], "fetched_at": NaN}', "the usage cache holds a non-finite number NaN"),
        ("[1, 2]", "the usage cache is not fetch_usage.py's shape (no `accounts` list)"),
        ('{"accounts": {"a": 1}, "fetched_at": "2026-12-01T11:55:00+00:00"}', "not fetch_usage.py's shape"),
        ('{"accounts": []}', "the usage cache has no readable `fetched_at` time"),
        ('{"accounts": [], "fetched_at": "yesterday"}', "the usage cache has no readable `fetched_at` time"),
    ],
)
def test_a_cache_that_is_not_json_or_of_another_shape_is_unknown_with_the_reason(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "usage_cache.json"
    path.write_text(content)
    cache = read_usage_cache(path, NOW, HOUR)
    assert cache.problem is not None and problem in cache.problem
    usage = cache.usage("account1")
    assert usage.unknown == cache.problem and usage.highest() is None
    assert not over_utilization(usage, 50)  # a broken file holds nothing back


def test_an_entry_of_another_shape_is_unknown_alone(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text())
    data["accounts"][0]["five_hour"] = {"utilization": "97%"}
    data["accounts"][1]["seven_day"] = [60]
    data["accounts"].append({"five_hour": {"utilization": 99.0}})  # no name: cannot be matched
    path = tmp_path / "usage_cache.json"
    path.write_text(json.dumps(data))
    cache = read_usage_cache(path, NOW, HOUR)
    assert cache.problem is None
    assert cache.usage("account1").unknown == "its `five_hour` is not fetch_usage.py's shape"
    assert cache.usage("account2").unknown == "its `seven_day` is not fetch_usage.py's shape"


def test_a_stale_cache_is_shown_as_stale_but_not_used(tmp_path: Path) -> None:
    later = NOW + timedelta(hours=2)
    cache = read_usage_cache(FIXTURE, later, HOUR)
    assert cache.stale and cache.problem is not None
    assert cache.problem.startswith("the usage cache is stale: fetched 2 h 4 min ago, older than 1 h 0 min")
    assert cache.usage("account1").highest() is None  # not used to choose accounts
    assert cache.shown("account1").five_hour == Window(97.0, datetime(2026, 12, 1, 14, 0, tzinfo=UTC))


def test_the_path_starts_at_the_bot_s_home() -> None:
    assert cache_path("~/.claude-usage/usage_cache.json", "/home/csb") == Path(
        "/home/csb/.claude-usage/usage_cache.json"
    )
    assert cache_path("/srv/usage.json", "/home/csb") == Path("/srv/usage.json")


def test_an_account_at_or_above_the_limit_is_avoided_and_unknown_never_is() -> None:
    busy = AccountUsage(five_hour=Window(97.0), seven_day=Window(41.5))
    assert over_utilization(busy, 95) and over_utilization(busy, 97)
    assert not over_utilization(busy, 97.5)
    assert not over_utilization(busy, 100)  # 100: never avoid an account for its use
    weekly = AccountUsage(five_hour=None, seven_day=Window(96.0))
    assert over_utilization(weekly, 95)
    assert not over_utilization(AccountUsage(unknown="no usage cache"), 1)
    assert utilization_detail(busy) == "97.0% 5-hour, 41.5% 7-day"


def test_why_an_account_is_held_follows_the_claim_s_order(tmp_path: Path) -> None:
    home = tmp_path / "account1"
    credentials = home / ".claude" / ".credentials.json"
    credentials.parent.mkdir(parents=True)
    expires = int((NOW + timedelta(days=2)).timestamp() * 1000)
    credentials.write_text(json.dumps({"claudeAiOauth": {"accessToken": "x", "expiresAt": expires}}))
    shutil.copy(FIXTURE, tmp_path / "usage_cache.json")
    cache = read_usage_cache(tmp_path / "usage_cache.json", NOW, HOUR)
    account = Account(
        home=str(home), turn=0, rested_until=None, rest_reason=None, drained_at=None, drained_by=None
    )

    def held(account: Account, limit: float = 95) -> tuple[str, str | None] | None:
        found = why_held(account, NOW, fallback=False, ready=None, usage=cache, limit=limit)
        return None if found is None else (found.why, found.detail)

    assert held(account) == ("utilisation", "97.0% 5-hour, 41.5% 7-day")
    assert held(account, limit=98) is None
    resting = Account(str(home), 0, NOW + HOUR, "rate limit", None, None)
    assert held(resting) == ("resting", "rate limit")
    drained = Account(str(home), 0, NOW + HOUR, "rate limit", NOW, "U0CAROL")
    assert held(drained) == ("drained", "U0CAROL")  # the drain is named first: a person decided it
    expires = int((NOW + timedelta(minutes=3)).timestamp() * 1000)
    credentials.write_text(json.dumps({"claudeAiOauth": {"accessToken": "x", "expiresAt": expires}}))
    assert held(account) == ("expired", None)
