"""What runs a lane: the one interface the engine and the reconciliation know an executor by.

A lane attempt is claimed in the database first (`running`, with its marker and host), then handed to
the executor as a `LaneLaunch`. From then on the engine asks the executor, once per tick and for all
lanes at once, what became of them (`observe`); it judges an ended lane by its files under `runs/`,
which every executor writes to the same place (`log_path`). Stopping stays the watcher's decision:
`interrupt` once (the lane may tear down its sandbox), `kill` when the grace period is over. After a
restart the reconciliation hands the executor the lanes the database says are running (`adopt`).

An executor finds a lane by what the database holds of it: the local one by the marker in the process
environment (pid and host recorded for people and for the host check), another by an id derived from
the attempt (`job_name(run, lane, attempt)`), so nothing beyond the lane row is stored for it. That is
what a `LaneRef` carries: the few fields of the lane row an executor reads, never the row itself.

Each executor is one module of this folder, registered by its kind in `registry.py` with its settings
section and its `check` hook. Waiting for lanes to end is no part of this seam: the engine never waits
for a lane (its tick looks), so that lives with the tests and benchmarks that do.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from bot.csb.child_env import ChildEnv
from bot.domain.clock import Clock
from bot.domain.errors import InfraError


@dataclass(frozen=True)
class LaneRef:
    """A running lane attempt as an executor knows it: what the database holds of it, read-only.

    `log_path` is relative to the checkout; `host`, `marker` and `pid` are what the local executor finds
    a process by; `run_id` and `attempt` name a job (`job_name`); `started_at` is when it was claimed."""

    id: int
    run_id: int
    attempt: int
    log_path: str
    host: str | None = None
    marker: str | None = None
    pid: int | None = None
    started_at: datetime | None = None


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

    async def observe(self, lanes: Collection[LaneRef]) -> dict[int, Seen]:
        """One batched look at all these lanes (lane id → `Seen`): one call per tick, never one per lane."""
        ...

    async def interrupt(self, lane: LaneRef) -> None:
        """Ask the lane to stop and tear down (SIGINT to Harbor); the watcher `kill`s it after the grace."""
        ...

    async def kill(self, lane: LaneRef) -> None:
        """End the lane now: its grace period is over."""
        ...

    async def adopt(self, lanes: Sequence[LaneRef]) -> Adopted:
        """Find again the lanes a previous bot process left running (after a restart or a takeover)."""
        ...

    def log_path(self, lane: LaneRef) -> Path:
        """The lane's log file, whose last lines give the reasons in the report."""
        ...

    def forget(self, lane_id: int) -> None:
        """Let go of a lane whose ending was written (or that the reconciliation queued again)."""
        ...

    async def close(self) -> None:
        """Let go of connections at shutdown; lanes keep running (the next bot process adopts them)."""
        ...


class ProbeStatus(StrEnum):
    OK = "ok"
    WARN = "warn"  # works, but not as configured or as well as it could
    FAIL = "fail"  # lanes cannot run until this is fixed


@dataclass(frozen=True)
class Probe:
    """One thing `csb-bot check` looked at, and what it found, in one line (never a secret)."""

    status: ProbeStatus
    message: str


class ExecutorSettings(BaseModel):
    """An executor's section of the config file, `[executor.<kind>]`, with the environment merged in.

    `ENV` maps a field to the environment variable that wins over it (blank: unset); `unusable` says
    why these settings, complete, cannot run lanes (say, a required address missing from both places)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ENV: ClassVar[dict[str, str]] = {}

    kind: str

    def unusable(self) -> str | None:
        return None


@dataclass(frozen=True)
class ExecutorContext:
    """What every executor is built with besides its settings: the checkout (lanes' cwd and log
    paths are relative to it), this bot's host, the clock, and the grace period between a stop and
    the kill."""

    repo: Path
    host: str
    clock: Clock
    grace_sec: float
