"""A migrated SQLite database for each test, copied from one template per test process, as the PostgreSQL
cluster hands each test a copy of its migrated template (`postgres_cluster.py`).

Migrating an empty SQLite file runs every revision, each its own committed transaction: 0.1 s of CPU and,
with the commits' syncs on a loaded machine, up to 2 s of wall time, for every test that opened a store;
a copy of the template takes a few milliseconds, and the bot's start then finds the schema at head. A test
that needs an empty database names a file of its own (or asks the cluster for `migrated=False`).
"""

from __future__ import annotations

import asyncio
import atexit
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bot.store.db import Store

_lock = threading.Lock()
_template: Path | None = None


async def _migrate(path: Path) -> None:
    store = Store(f"sqlite:///{path}")
    try:
        await store.create_tables()
    finally:
        await store.close()  # the last connection gone, the write-ahead log is folded into the file


def _made_template() -> Path:
    global _template
    with _lock:
        if _template is None:
            folder = Path(tempfile.mkdtemp(prefix="csb-sqlite-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "template.db"
            # On a thread of its own: the caller may be a fixture or a test inside a running event loop.
            with ThreadPoolExecutor(1) as thread:
                thread.submit(asyncio.run, _migrate(path)).result()
            leftovers = [p.name for p in folder.iterdir() if p != path]
            assert not leftovers, f"the template's database left {leftovers} beside it"
            _template = path
        return _template


def migrated_sqlite(path: Path) -> str:
    """The URL of a SQLite database at `path` at the schema's head: a copy of the template, unless a file
    is already there (a test that starts a second bot on the first one's database)."""
    if not path.exists():
        shutil.copyfile(_made_template(), path)
    return f"sqlite:///{path}"
