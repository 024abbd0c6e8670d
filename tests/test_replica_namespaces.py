"""Two replicas with one host name and separate PID namespaces (containers with host networking, two
machines named alike): neither sees the other's processes, so neither may judge the other's pid or
take its lanes for lost. The second bot runs in a PID namespace of its own (`unshare`, which needs the
right to make one: the test is skipped where that is refused), with the host name left the same: the
holder's pid and its lanes are invisible to it. It must wait for the lease to expire, which a live
holder never lets happen; before, it took the lease at once and started the running lanes again."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from bot_process import DEADLINE, World, every_lane_ran_once, request_and_approve, world
from waiting import until

pytestmark = pytest.mark.slow

# Lanes that work longer than a second bot's start on a loaded machine plus the reconciler's spawn grace
# (2 s in the bot-process config), so a wrongful takeover would find them running and start them again.
LANE_SECONDS = "10"


def _own_pid_namespace() -> tuple[str, ...] | None:
    """`unshare` argv giving a child its own PID namespace (and /proc), or None where that is refused."""
    tool = shutil.which("unshare")
    if tool is None:
        return None
    argv = (tool, "--pid", "--fork", "--mount-proc", "--kill-child")
    probe = subprocess.run([*argv, "true"], capture_output=True, check=False, timeout=30)
    return argv if probe.returncode == 0 else None


async def test_a_replica_that_cannot_see_the_holders_processes_never_runs_its_lanes_again(
    tmp_path: Path, db_url: str
) -> None:
    namespace = _own_pid_namespace()
    if namespace is None:
        pytest.skip("unshare cannot make a PID namespace here")
    async with world(tmp_path, db_url) as w:
        w.env["HARBOR_STANDIN_DELAY"] = LANE_SECONDS
        first = await w.start_bot()
        await until(w.lease_pid, "the first bot to take the lease")
        await request_and_approve(w, first, "run csb_sdlc_fix")
        await until(lambda: _running(w), "lanes to run", DEADLINE)
        await w.start_bot(prefix=namespace)  # same host name, its own PID namespace
        await until(w.finished, "the run to finish", DEADLINE * 2)
        await every_lane_ran_once(w)
        assert await w.lease_pid() == first.proc.pid  # the live holder kept the timers throughout


async def _running(w: World) -> bool:
    return "running" in await w.lane_states()
