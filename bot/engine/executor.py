"""The local executor: each lane is one Harbor child process in its own process group.

Output goes to the lane's log file (never a pipe to the bot, so a chatty Harbor cannot stall us), and
the exit code is collected by a waiter task so the engine's tick only reads a dict.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.domain.errors import InfraError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LaneLaunch:
    lane_id: int
    argv: Sequence[str]
    cwd: Path
    env: Mapping[str, str]
    log_path: Path


class LocalExecutor:
    def __init__(self) -> None:
        self._procs: dict[int, asyncio.subprocess.Process] = {}
        self._exits: dict[int, int] = {}
        self._waiters: set[asyncio.Task[None]] = set()

    async def start(self, launch: LaneLaunch) -> int:
        """Spawn the lane and return its pid; an unstartable executable is an InfraError."""
        launch.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(launch.log_path, "ab") as log_file:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *launch.argv,
                    cwd=launch.cwd,
                    env=dict(launch.env),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log_file,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,  # its own process group, so a stop reaches Harbor's children
                )
            except (FileNotFoundError, PermissionError) as exc:
                raise InfraError(f"cannot start harbor ({launch.argv[0]}): {exc.strerror}") from exc
        self._procs[launch.lane_id] = proc
        waiter = asyncio.create_task(self._wait(launch.lane_id, proc))
        self._waiters.add(waiter)
        waiter.add_done_callback(self._waiters.discard)
        return proc.pid

    async def _wait(self, lane_id: int, proc: asyncio.subprocess.Process) -> None:
        self._exits[lane_id] = await proc.wait()

    def is_tracked(self, lane_id: int) -> bool:
        return lane_id in self._procs

    def exit_code(self, lane_id: int) -> int | None:
        """The exit code once the process has ended, else None."""
        return self._exits.get(lane_id)

    def forget(self, lane_id: int) -> None:
        self._procs.pop(lane_id, None)
        self._exits.pop(lane_id, None)

    def stop(self, lane_id: int, pid: int | None) -> None:
        """SIGINT the lane's process group so Harbor can tear down what it started."""
        target = self._procs[lane_id].pid if lane_id in self._procs else pid
        if target is None:
            return
        try:
            os.killpg(target, signal.SIGINT)
        except ProcessLookupError:
            log.info("lane %s: process group %s already gone", lane_id, target)

    async def wait_all(self) -> None:
        """Wait until every started process has exited (tests and shutdown)."""
        if self._waiters:
            await asyncio.gather(*list(self._waiters))

    async def wait_any(self) -> None:
        """Wait until at least one running process exits."""
        if self._waiters:
            await asyncio.wait(list(self._waiters), return_when=asyncio.FIRST_COMPLETED)

    @property
    def running_count(self) -> int:
        return sum(1 for lane_id in self._procs if lane_id not in self._exits)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
