"""`csb-bot db stats` as an operator runs it, on both databases: each table's rows and bytes, and the
whole database's size, as text and as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from bot.store import outbox, schema
from bot.store.db import Store
from bot.store.records import OutboxKind

CSB_BOT = [sys.executable, "-m", "bot"]
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def _stats(db_url: str, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "CSB_"))}
    env["CSB_DATABASE_URL"] = db_url  # no Slack token: an operator's look at the database needs none
    return subprocess.run(
        [*CSB_BOT, "db", "stats", *extra], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )


async def _three_outbox_rows(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    async with store.write() as session:
        for n in range(3):
            await outbox.enqueue(session, kind=OutboxKind.EPHEMERAL, target=f"reply:{n}", now=NOW, text="hi")
    await store.close()


async def test_db_stats_counts_rows_and_bytes_per_table(db_url: str, tmp_path: Path) -> None:
    await _three_outbox_rows(db_url)
    as_json = _stats(db_url, tmp_path, "--json")
    assert as_json.returncode == 0, as_json.stderr
    found = json.loads(as_json.stdout)
    tables = {table["name"]: table for table in found["tables"]}
    assert {"runs", "lanes", "outbox", "audit_events", "run_requests"} <= set(tables)
    assert tables["outbox"]["rows"] == 3 and tables["lanes"]["rows"] == 0
    assert all(table["bytes"] > 0 for table in tables.values())  # an empty table still has its pages
    # The whole database holds every table (and, on PostgreSQL, the catalog besides).
    assert found["total_bytes"] >= sum(table["bytes"] for table in tables.values())
    as_text = _stats(db_url, tmp_path)
    assert as_text.returncode == 0, as_text.stderr
    first, header, *lines = as_text.stdout.splitlines()
    assert first.endswith(f"{found['total_bytes']:,} bytes ({found['how']})")
    assert header.split() == ["table", "rows", "bytes"]
    (line,) = [line for line in lines if line.split()[0] == "outbox"]
    assert line.split() == ["outbox", "3", f"{tables['outbox']['bytes']:,}"]


def test_db_stats_on_a_database_without_the_schema_says_so(tmp_path: Path) -> None:
    result = _stats(f"sqlite:///{tmp_path / 'new.db'}", tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"csb-bot: sqlite:///{tmp_path / 'new.db'}: no schema yet (this csb-bot creates revision "
        f"{schema.head()} at start or with `csb-bot db upgrade`)"
    )
