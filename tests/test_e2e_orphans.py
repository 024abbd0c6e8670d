"""Orphans: a process carrying the bot's lane marker, started in the CSB checkout, that no running lane
owns is shown to admins in App Home and by `csb-bot check`, and to no one else; a lane's own process
never is. The orphan is a real child process, as a Harbor left behind by a retried lane would be."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from harness import running_bot
from idle import run_until_idle
from test_e2e_run import card_text
from test_run_control import SLUG, script

from bot.executors.processes import MARKER_ENV, markers_supported
from bot.playground import ADMIN, APPROVER, REQUESTER
from bot.probes.base import Mark, ProbeContext
from bot.probes.orphans import OrphansProbe

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not markers_supported(), reason="orphans are found through /proc"),
]

ADMINS = f"""
[policy]
admins = ["{ADMIN}"]
"""
MARKER = "999.0123456789abcdef"
JOB = "csb_r9_l999_a1"


@contextmanager
def orphan(repo: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process in the checkout with a lane marker no lane holds, leading its own group as a lane does."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", "--job-name", JOB],
        cwd=repo,
        env={**os.environ, MARKER_ENV: MARKER},
        stdin=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        yield child
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


async def test_an_orphan_is_shown_to_admins_in_app_home_and_by_check(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, {SLUG: "hang"})
    async with running_bot(tmp_path, csb_database_url=db_url, config_text=ADMINS) as h:
        await h.driver.slash_command(REQUESTER, "run csb_sdlc_fix --parallel 2")
        await h.deliver()
        await h.driver.click_button(APPROVER, "C0PLAY", h.last_card()["ts"], "Approve")
        await h.deliver()
        with orphan(h.repo) as child:
            await _wait_for_marker(child.pid)
            h.clock.advance(timedelta(minutes=1, seconds=1))  # the engine looks once a minute
            await h.bot.engine.tick()  # the run's SLUG lanes start (and hang): theirs are not orphans
            await h.driver.app_home_opened(ADMIN)
            await h.driver.app_home_opened(REQUESTER)
            await h.deliver()
            admin_home = card_text(h.standin.home(ADMIN) or {})
            assert "*Orphaned lane processes* (1)" in admin_home
            assert f"pid {child.pid} on" in admin_home and f"job `{JOB}`" in admin_home
            assert f"marker `{MARKER}`" in admin_home
            assert "Orphaned" not in card_text(h.standin.home(REQUESTER) or {})  # admins only

            context = ProbeContext(settings=h.bot.settings, config=h.bot.config, environ=os.environ)
            lines = await OrphansProbe().run(context)
            assert [line.mark for line in lines] == [Mark.NOTE]
            assert f"pid {child.pid}, job {JOB}, marker {MARKER}: no running lane owns it" in lines[0].text
        h.clock.advance(timedelta(minutes=1, seconds=1))
        await h.bot.engine.tick()  # gone: the next look clears it, and the tabs are drawn again
        await h.deliver()
        assert "Orphaned" not in card_text(h.standin.home(ADMIN) or {})
        assert [line.text for line in await OrphansProbe().run(context)] == [
            "no orphaned lane process on this host"
        ]
        await h.driver.slash_command(REQUESTER, "cancel 1 done")
        await h.deliver()
        await run_until_idle(h.bot.engine, h.bot.store)


async def _wait_for_marker(pid: int) -> None:
    """The child shows its marker once it has exec'ed Python (a forked child shows its parent's)."""
    for _ in range(200):
        try:
            if f"{MARKER_ENV}={MARKER}".encode() in Path(f"/proc/{pid}/environ").read_bytes():
                return
        except OSError:
            pass
        await asyncio.sleep(0.01)
    raise AssertionError("the orphan never showed its marker")
