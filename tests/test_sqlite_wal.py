"""Connections opening a new SQLite file together all end in WAL mode, none with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from bot.store.db import enter_wal

CONNECTIONS = 8
ROUNDS = 40  # the plain pragma failed in about one round of seven with four connections


def _open_together(path: Path) -> list[str]:
    """Each connection's journal mode after the bot's connect steps, or the error it met."""
    start = threading.Barrier(CONNECTIONS)
    outcomes: list[str] = []

    def connect() -> None:
        conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            start.wait()
            cursor = conn.cursor()
            cursor.execute("PRAGMA busy_timeout=10000")
            enter_wal(cursor)
            outcomes.append(conn.execute("PRAGMA journal_mode").fetchone()[0])
        except sqlite3.Error as exc:
            outcomes.append(repr(exc))
        finally:
            conn.close()

    threads = [threading.Thread(target=connect) for _ in range(CONNECTIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_connections_to_a_new_file_all_enter_wal_mode(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        assert _open_together(tmp_path / f"{round_}.db") == ["wal"] * CONNECTIONS


def test_another_error_is_not_taken_for_a_lock(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db")
    cursor = conn.cursor()
    conn.close()
    try:
        enter_wal(cursor)
    except sqlite3.ProgrammingError as exc:
        assert "closed" in str(exc)
    else:
        raise AssertionError("a closed connection entered WAL mode")
