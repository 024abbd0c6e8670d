"""The local executor: each lane is one Harbor child process in its own process group, on this host.

Output goes to the lane's log file (never a pipe to the bot, so a chatty Harbor cannot stall us), and
the exit code is collected by a waiter task so the engine's tick only reads a dict. Processes found
after a restart (by the marker in their environment, see `processes`) are attached by pid: they are
not our children, so they are polled, not awaited. A lane recorded on another host is not ours to see.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from bot.csb.child_env import spawn_env
from bot.domain.errors import InfraError
from bot.domain.outcome import EXIT_UNKNOWN
from bot.executors.base import (
    RUNNING,
    UNSEEN,
    Adopted,
    ExecutorContext,
    ExecutorSettings,
    LaneLaunch,
    LaneRef,
    Probe,
    Seen,
    ended,
)
from bot.executors.processes import find_marked, markers_supported, process_alive

log = logging.getLogger(__name__)

_POLL_SECONDS = 0.05  # how often `wait_any` looks at attached processes, which cannot be awaited
SPAWN_THREADS = 4
# Harbor is a Python program, and CPython can lose a SIGINT that lands while its interpreter starts
# (measured here: 1 of 200 signals sent in a child's first 40 ms was never seen). Such a lane would run
# on until SIGKILL, skipping its teardown, so a lane younger than this gets its SIGINT at this age.
SIGINT_NOT_BEFORE = 2.0


class LocalSettings(ExecutorSettings):
    """The `[executor.local]` section: lanes are this host's child processes; nothing to set yet."""

    kind: Literal["local"] = "local"


async def check_local(settings: LocalSettings) -> list[Probe]:
    """Nothing beyond what `check` already looks at: the Harbor it runs and the checkout it runs in."""
    return []


class LocalExecutor:
    def __init__(self, repo: Path, host: str) -> None:
        self._repo = repo
        self._host = host  # lanes recorded on another host are not ours to see or signal
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._exits: dict[int, int] = {}
        self._attached: dict[int, int | None] = {}  # lane id → pid (None: already gone when found)
        self._pending: dict[int, asyncio.Future[None]] = {}  # resolved when the lane's process exits
        self._spawned_at: dict[int, float] = {}  # lane id → monotonic time its process was started
        self._unseen_exits = 0  # exits since `wait_any` last returned
        self._spawner = ThreadPoolExecutor(max_workers=SPAWN_THREADS, thread_name_prefix="lane-spawn")
        _let_lanes_take_sigint()
        self.on_exit: Callable[[], None] | None = None

    @classmethod
    def for_host(cls, settings: LocalSettings, context: ExecutorContext) -> LocalExecutor:
        return cls(context.repo, context.host)

    async def start(self, launches: Sequence[LaneLaunch]) -> list[int | InfraError | None]:
        """Spawn several lanes at once, a few forks in parallel (each waits for its child's exec); per
        lane its pid, or an InfraError for an unstartable executable."""
        loop = asyncio.get_running_loop()
        spawned = await asyncio.gather(
            *(loop.run_in_executor(self._spawner, _spawn, launch) for launch in launches),
            return_exceptions=True,
        )
        results: list[int | InfraError | None] = []
        for launch, proc in zip(launches, spawned, strict=True):
            if isinstance(proc, InfraError | OSError):
                results.append(proc if isinstance(proc, InfraError) else InfraError(str(proc)))
            elif isinstance(proc, BaseException):
                raise proc
            else:
                results.append(self._track(launch.lane_id, proc))
        return results

    def _track(self, lane_id: int, proc: subprocess.Popen[bytes]) -> int:
        self._procs[lane_id] = proc
        self._spawned_at[lane_id] = time.monotonic()
        self._pending[lane_id] = asyncio.get_running_loop().create_future()
        self._watch_exit(lane_id, proc)
        return proc.pid

    def _watch_exit(self, lane_id: int, proc: subprocess.Popen[bytes]) -> None:
        """A pidfd becomes readable when the child exits (Linux); elsewhere a thread waits for it."""
        loop = asyncio.get_running_loop()
        try:
            fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            task = loop.create_task(asyncio.to_thread(proc.wait))
            task.add_done_callback(lambda done: self._exited(lane_id, done.result()))
            return

        def reap() -> None:
            code = proc.poll()
            if code is not None:
                loop.remove_reader(fd)
                os.close(fd)
                self._exited(lane_id, code)

        loop.add_reader(fd, reap)

    def _exited(self, lane_id: int, code: int) -> None:
        self._exits[lane_id] = code
        self._unseen_exits += 1
        pending = self._pending.pop(lane_id, None)
        if pending is not None and not pending.done():
            pending.set_result(None)
        if self.on_exit is not None:
            self.on_exit()

    async def unavailable(self) -> str | None:
        """This host runs its lanes itself: always available."""
        return None

    async def observe(self, lanes: Collection[LaneRef]) -> dict[int, Seen]:
        """Reads what the waiters collected (attached processes are polled by pid)."""
        return {lane.id: self._seen(lane) for lane in lanes}

    def _seen(self, lane: LaneRef) -> Seen:
        lane_id = lane.id
        if self.is_tracked(lane_id):
            code = self.exit_code(lane_id)
            return RUNNING if code is None else ended(code)
        elsewhere = lane.host if lane.host not in (None, self._host) else None
        return UNSEEN if elsewhere is None else Seen(known=False, elsewhere=elsewhere)

    async def adopt(self, lanes: Sequence[LaneRef]) -> Adopted:
        """Lanes of this host are found by their marker (by the recorded pid where /proc is missing):
        a live one is attached by pid, a gone one attached as ended; other hosts' are left alone."""
        mine = [lane for lane in lanes if lane.host in (None, self._host)]
        found = await asyncio.to_thread(_find, mine)
        adopted = Adopted(elsewhere=[lane.id for lane in lanes if lane.host not in (None, self._host)])
        for lane in mine:
            pid = found.get(lane.marker or "")
            self._attached[lane.id] = pid
            if pid is None:
                adopted.ended.append(lane.id)
            else:
                adopted.running[lane.id] = pid
        return adopted

    def log_path(self, lane: LaneRef) -> Path:
        return self._repo / lane.log_path

    def is_tracked(self, lane_id: int) -> bool:
        return lane_id in self._procs or lane_id in self._attached

    def exit_code(self, lane_id: int) -> int | None:
        """The exit code once the process has ended, else None; EXIT_UNKNOWN for an attached one."""
        if lane_id in self._attached:
            pid = self._attached[lane_id]
            return None if pid is not None and process_alive(pid) else EXIT_UNKNOWN
        return self._exits.get(lane_id)

    def forget(self, lane_id: int) -> None:
        self._procs.pop(lane_id, None)
        self._exits.pop(lane_id, None)
        self._attached.pop(lane_id, None)
        self._spawned_at.pop(lane_id, None)

    async def interrupt(self, lane: LaneRef) -> None:
        """SIGINT the lane's process group so Harbor can tear down containers and sandboxes; a lane
        still starting gets it once it is `SIGINT_NOT_BEFORE` seconds old (see there why)."""
        lane_id = lane.id
        spawned_at = self._spawned_at.get(lane_id)
        wait = 0.0 if spawned_at is None else spawned_at + SIGINT_NOT_BEFORE - time.monotonic()
        if wait > 0:
            asyncio.get_running_loop().call_later(wait, self._signal, lane_id, signal.SIGINT)
            return
        self._signal(lane_id, signal.SIGINT)

    async def kill(self, lane: LaneRef) -> None:
        """SIGKILL the lane's process group: the grace period is over."""
        self._signal(lane.id, signal.SIGKILL)

    def _signal(self, lane_id: int, signum: signal.Signals) -> None:
        """Only processes we track are signalled: a pid from the database may be another host's."""
        target = self.pid(lane_id)
        if target is None or self.exit_code(lane_id) is not None:
            return
        try:
            os.killpg(target, signum)
        except ProcessLookupError:
            log.info("lane %s: process group %s already gone", lane_id, target)
        except PermissionError:
            log.warning("lane %s: not allowed to signal process group %s", lane_id, target)

    def pid(self, lane_id: int) -> int | None:
        if lane_id in self._procs:
            return self._procs[lane_id].pid
        return self._attached.get(lane_id)

    # Waiting for lanes (`wait_all`, `wait_any`, `running_count`) is no part of the `Executor` seam: the
    # engine never waits. Tests and benchmarks wait, through their own `Waitable`.

    async def wait_all(self) -> None:
        """Wait until every started process has exited (the end of a test or benchmark)."""
        if self._pending:
            await asyncio.gather(*list(self._pending.values()))

    async def wait_any(self, *, quiet: float = 0.0, longest: float = 0.0) -> None:
        """Wait until at least one running process exits (attached ones are polled).

        Returns at once when a process exited since the last call returned (say, during a tick). With
        `quiet`, keeps gathering exits until none came for `quiet` seconds (at most `longest`), so the
        lanes of one wave are settled and refilled in one tick.
        """
        if not self._unseen_exits:
            await self._first_exit()
        loop = asyncio.get_running_loop()
        until = loop.time() + longest
        while quiet and self._pending and loop.time() < until:
            done, _ = await asyncio.wait(
                list(self._pending.values()), timeout=quiet, return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                break
        self._unseen_exits = 0

    async def _first_exit(self) -> None:
        polled = any(self.exit_code(lane_id) is None for lane_id in self._attached)
        if self._pending:
            await asyncio.wait(
                list(self._pending.values()),
                timeout=_POLL_SECONDS if polled else None,
                return_when=asyncio.FIRST_COMPLETED,
            )
        elif polled:
            await asyncio.sleep(_POLL_SECONDS)

    async def close(self) -> None:
        """Lane processes outlive the bot (a restart adopts them): nothing to let go of."""
        return None

    @property
    def running_count(self) -> int:
        spawned = sum(1 for lane_id in self._procs if lane_id not in self._exits)
        return spawned + sum(1 for lane_id in self._attached if self.exit_code(lane_id) is None)


def _find(lanes: list[LaneRef]) -> dict[str, int]:
    """Live processes by marker (worker thread: it reads /proc); without /proc, the recorded pid."""
    found = find_marked({lane.marker for lane in lanes if lane.marker})
    if not markers_supported():
        found.update(
            {lane.marker: lane.pid for lane in lanes if lane.marker and lane.pid and process_alive(lane.pid)}
        )
    return found


def _spawn(launch: LaneLaunch) -> subprocess.Popen[bytes]:
    """Fork/exec one lane with its output appended to its log file (not a pipe to the bot)."""
    launch.log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(launch.log_path, "ab") as log_file:
        try:
            return subprocess.Popen(  # a plain fork/exec: cheaper than asyncio's, no thread per child
                list(launch.argv),
                cwd=launch.cwd,
                env=spawn_env(launch.env),
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a stop reaches Harbor's children
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise InfraError(f"cannot start harbor ({launch.argv[0]}): {exc.strerror}") from exc


def _let_lanes_take_sigint() -> None:
    """A bot started with SIGINT ignored (nohup, a background job) would pass that on to every lane,
    and Harbor would ignore the SIGINT meant to let it tear down. A caught signal is reset to its
    default by exec, so the bot catches SIGINT instead (and still does nothing with it)."""
    if (
        signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        and threading.current_thread() is threading.main_thread()
    ):
        signal.signal(signal.SIGINT, _ignore)


def _ignore(_signum: int, _frame: object) -> None:
    return None
