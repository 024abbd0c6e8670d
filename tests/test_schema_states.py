"""`db current`, `db upgrade` and `serve` against every state a version table can be in, as operators run
them (child processes), on both databases. A rolling deploy upgrades the schema while older replicas
still run: an older replica starts on a newer schema unchanged (as docs/deploy.md says), and a version
table no migration wrote (emptied, two rows, a revision not numbered as ours) stops every replica with
one line, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import text
from test_cli import CSB_BOT, bot_env, run

from bot.store import schema
from bot.store.db import Store
from bot.store.models import RunRequest

pytestmark = pytest.mark.slow

NEWER = "9999"  # numbered above any head this version ships
COMMANDS = ("current", "upgrade", "serve")  # `db current`, `db upgrade` and `serve`


async def _set_versions(url: str, *revisions: str) -> None:
    store = Store(url)
    try:
        async with store.write() as session:
            await session.execute(text("DELETE FROM alembic_version"))
            for revision in revisions:
                await session.execute(text("INSERT INTO alembic_version VALUES (:r)"), {"r": revision})
    finally:
        await store.close()


async def _count_requests(url: str) -> int:
    store = Store(url)
    try:
        async with store.read() as session:
            return len((await session.execute(text(f"SELECT id FROM {RunRequest.__tablename__}"))).all())
    finally:
        await store.close()


def _serve_starts(tmp_path: Path, env: dict[str, str]) -> tuple[bool, str]:
    """Whether `serve` gets to listening; what it printed when it stopped instead."""
    with subprocess.Popen(
        [*CSB_BOT, "serve", "--port", "0"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as bot:
        assert bot.stdout is not None and bot.stderr is not None
        first = bot.stdout.readline()
        if "listening" in first:
            bot.terminate()
            bot.wait(timeout=60)
            return True, first
        bot.wait(timeout=60)
        return False, first + bot.stderr.read()


async def test_db_current_and_serve_agree_on_every_version_table(tmp_path: Path, db_url: str) -> None:
    env = bot_env(tmp_path, CSB_DATABASE_URL=db_url)
    assert run(["db", "upgrade"], env, cwd=tmp_path).returncode == 0
    head = schema.head()

    await _set_versions(db_url, NEWER)  # a later version's `db upgrade` ran first
    current = run(["db", "current"], env, cwd=tmp_path)
    assert current.returncode == 0, current.stderr
    assert (
        f"schema revision {NEWER}, newer than this csb-bot's {head}: it runs on it unchanged"
        in current.stdout
    )
    upgraded = run(["db", "upgrade"], env, cwd=tmp_path)
    assert upgraded.returncode == 0 and "newer than this csb-bot's" in upgraded.stdout, upgraded.stderr
    started, said = _serve_starts(tmp_path, env)
    assert started, said
    after = run(["db", "current"], env, cwd=tmp_path)
    assert f"schema revision {NEWER}," in after.stdout  # left as the newer version made it

    for number, (revisions, expected) in enumerate(
        (
            (("zz-not-ours",), "schema revision 'zz-not-ours' is not one this csb-bot knows"),
            ((), "the version table is empty but the tables exist"),
            ((head, NEWER), f"the version table holds 2 revisions ({head}, {NEWER})"),
        )
    ):
        await _set_versions(db_url, *revisions)
        # Every state is read on both databases, and every command meets every state over the two:
        # two of the commands on SQLite, the third on PostgreSQL. They share one reading of the table,
        # and each is a process start of several seconds on a loaded machine (all nine per database
        # took this test past its time limit there).
        offsets = (0, 1) if db_url.startswith("sqlite") else (2,)
        chosen = [COMMANDS[(number + offset) % len(COMMANDS)] for offset in offsets]
        for command in chosen:
            if command == "serve":
                started, said = _serve_starts(tmp_path, env)
                assert not started and expected in said and "Traceback" not in said, said
                continue
            answer = run(["db", command], env, cwd=tmp_path)
            assert answer.returncode == 1, (revisions, command, answer.stdout, answer.stderr)
            assert expected in answer.stdout and "Traceback" not in answer.stderr, (
                answer.stdout,
                answer.stderr,
            )
            assert len(answer.stdout.strip().splitlines()) == 1
    assert await _count_requests(db_url) == 0  # nothing was created on top of what is there
