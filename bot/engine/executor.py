"""What runs a lane: the one interface the engine, the reconciliation and the tests know an executor by.

A lane attempt is claimed in the database first (`running`, with its marker and host), then handed to
the executor as a `LaneLaunch`. From then on the engine asks the executor, once per tick and for all
lanes at once, what became of them (`observe`); it judges an ended lane by its files under `runs/`,
which every executor writes to the same place (`log_path`). Stopping stays the watcher's decision:
`interrupt` once (the lane may tear down its sandbox), `kill` when the grace period is over. After a
restart the reconciliation hands the executor the lanes the database says are running (`adopt`).

An executor finds a lane by what the database holds of it: the local one by the marker in the process
environment (pid and host recorded for people and for the host check), another by an id derived from
the attempt (`job_name(run, lane, attempt)`), so nothing beyond the lane row is stored for it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from bot.csb.child_env import ChildEnv
from bot.domain.errors import InfraError
from bot.store.models import Lane


@dataclass(frozen=True)
class LaneLaunch:
    lane_id: int
    argv: Sequence[str]
    cwd: Path
    env: ChildEnv  # from bot.csb.child_env: the allow-list, never the bot's own settings
    log_path: Path
    job: str = ""  # the attempt's `job_name(run, lane, attempt)`: an executor's id for it, if it needs one


@dataclass(frozen=True)
class Seen:
    """One lane as its executor sees it: running, ended with `exit_code`, or not its own to see.

    `elsewhere` names where a lane the executor cannot see runs (another host): it is judged by its
    files alone and, with no result within its time limit, taken for lost with that place."""

    known: bool
    exit_code: int | None = None
    elsewhere: str | None = None

    @property
    def running(self) -> bool:
        return self.known and self.exit_code is None


RUNNING = Seen(known=True)
UNSEEN = Seen(known=False)


def ended(exit_code: int) -> Seen:
    return Seen(known=True, exit_code=exit_code)


@dataclass(frozen=True)
class Adopted:
    """What `adopt` found of the lanes a previous bot process left running.

    `running`: alive, watched again (lane id → the pid to record, None when the executor has none);
    `ended`: gone, now known to the executor as ended (`EXIT_UNKNOWN`) so the watcher judges their
    files, unless the reconciliation finds them lost and `forget`s them; `elsewhere`: not this
    executor's to see (left to their files and time limit)."""

    running: dict[int, int | None] = field(default_factory=dict)
    ended: list[int] = field(default_factory=list)
    elsewhere: list[int] = field(default_factory=list)


class Executor(Protocol):
    """Runs lane attempts. Every method takes lanes the database says are running; none writes it."""

    on_exit: Callable[[], None] | None  # called when a lane is seen to end between ticks, if ever

    async def start(self, launches: Sequence[LaneLaunch]) -> list[int | InfraError | None]:
        """Start several lanes at once; per lane the pid to record (None: none), or why it could not start."""
        ...

    async def unavailable(self) -> str | None:
        """Why no lane can start now (what runs them cannot be reached), or None: lanes may start."""
        ...

    async def observe(self, lanes: Collection[Lane]) -> dict[int, Seen]:
        """One batched look at all these lanes (lane id → `Seen`): one call per tick, never one per lane."""
        ...

    async def interrupt(self, lane: Lane) -> None:
        """Ask the lane to stop and tear down (SIGINT to Harbor); the watcher `kill`s it after the grace."""
        ...

    async def kill(self, lane: Lane) -> None:
        """End the lane now: its grace period is over."""
        ...

    async def adopt(self, lanes: Sequence[Lane]) -> Adopted:
        """Find again the lanes a previous bot process left running (after a restart or a takeover)."""
        ...

    def log_path(self, lane: Lane) -> Path:
        """The lane's log file, whose last lines give the reasons in the report."""
        ...

    def forget(self, lane_id: int) -> None:
        """Let go of a lane whose ending was written (or that the reconciliation queued again)."""
        ...

    @property
    def running_count(self) -> int:
        """Lanes started or adopted here and not yet seen to end."""
        ...

    async def wait_any(self, *, quiet: float = 0.0, longest: float = 0.0) -> None:
        """Return once a lane may have ended; with `quiet`, gather the exits of a wave."""
        ...

    async def wait_all(self) -> None:
        """Wait until every lane started here has ended (shutdown of a test or benchmark)."""
        ...

    async def close(self) -> None:
        """Let go of connections at shutdown; lanes keep running (the next bot process adopts them)."""
        ...
