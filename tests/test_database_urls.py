"""CSB_DATABASE_URL: SQLite or PostgreSQL (asyncpg), and a password never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.settings import DatabaseSettings, Settings
from bot.store.db import (
    COMMAND_TIMEOUT_SEC,
    IDLE_OPTION,
    _driver_url,
    _pool_options,
    async_url,
    display_url,
)

SECRET_URL = "postgresql+asyncpg://csb:hunter2-secret@db.internal:5432/csb"


@pytest.mark.parametrize(
    ("given", "used"),
    [
        ("sqlite:///x.db", "sqlite+aiosqlite:///x.db"),
        ("postgresql://csb:pw@db/csb", "postgresql+asyncpg://csb:pw@db/csb"),
        ("postgres://csb:pw@db/csb", "postgresql+asyncpg://csb:pw@db/csb"),
        (SECRET_URL, SECRET_URL),
    ],
)
def test_the_bot_always_talks_to_the_database_async(given: str, used: str) -> None:
    assert async_url(given) == used


def test_a_url_shown_has_its_password_masked() -> None:
    assert display_url(SECRET_URL) == "postgresql+asyncpg://csb:***@db.internal:5432/csb"


def test_postgresql_is_accepted_and_its_password_is_not_in_the_settings_repr(tmp_path: Path) -> None:
    settings = Settings(
        slack_bot_token="xoxb-x", slack_signing_secret="s", csb_database_url=SECRET_URL, csb_repo=tmp_path
    )
    assert settings.csb_database_url == SECRET_URL
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings)
    assert settings.database_for_display() == "postgresql+asyncpg://csb:***@db.internal:5432/csb"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://csb:hunter2-secret@db/csb", "not mysql"),
        ("postgresql+psycopg2://csb:hunter2-secret@db/csb", "not postgresql+psycopg2"),
        ("postgresql+asyncpg://csb:hunter2-secret@/csb", "names the host and the database"),
        ("not a url", "not a database URL"),
    ],
)
def test_other_urls_are_refused_without_repeating_them(url: str, message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        DatabaseSettings(csb_database_url=url)
    (error,) = refused.value.errors()
    assert message in error["msg"] and "hunter2" not in error["msg"]


def test_every_postgresql_statement_has_a_deadline_the_url_may_set() -> None:
    """A server that stops answering must not hold a pooled connection for good, and a lock held by
    other work is given up (busy) before that deadline (`_pool_options`)."""
    url = "postgresql+asyncpg://bot@db:5432/csb"
    assert _pool_options(url)["connect_args"]["command_timeout"] == COMMAND_TIMEOUT_SEC
    idle = {"idle_in_transaction_session_timeout": "60000"}
    assert _pool_options(url)["connect_args"]["server_settings"] == {"lock_timeout": "8000", **idle}
    own = _pool_options(f"{url}?command_timeout=60")["connect_args"]
    assert "command_timeout" not in own and own["server_settings"] == {"lock_timeout": "48000", **idle}
    assert _pool_options("sqlite:///x.db") == {}


def test_a_session_idle_in_a_transaction_is_ended_by_the_server_after_a_time_the_url_may_set() -> None:
    """A process frozen inside a transaction must not keep its row locks for good; the URL's own key
    sets the time (seconds, 0: never) and is kept from the driver, which would refuse it."""
    url = "postgresql+asyncpg://bot:pw@db:5432/csb"
    settings = _pool_options(f"{url}?{IDLE_OPTION}=2.5&command_timeout=5")["connect_args"]["server_settings"]
    assert settings["idle_in_transaction_session_timeout"] == "2500"
    assert (
        _pool_options(f"{url}?{IDLE_OPTION}=0")["connect_args"]["server_settings"][
            "idle_in_transaction_session_timeout"
        ]
        == "0"
    )
    assert _driver_url(f"{url}?{IDLE_OPTION}=2.5&command_timeout=5") == f"{url}?command_timeout=5"
    assert _driver_url(url) == url
