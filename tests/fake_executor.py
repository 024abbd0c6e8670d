"""An executor that runs nothing: the engine's tests of claiming and dispatch see which lanes it was
handed, with which command and environment, without spawning the example bench's Harbor stand-in.

It behaves as a real executor does at the seam (`bot.executors.base.Executor`): a started lane is
running until it ends, `observe` answers for all lanes at once, a lane it never started is not its to
see, and `unavailable` pauses the dispatcher. Where it differs, it says so:
- a lane ends only when the test says (`end`), and then leaves no trial result behind, so the watcher
  judges it as a real lane that wrote nothing (an infrastructure failure);
- `interrupt` and `kill` end a lane at once (exit 130 and 137), as a Harbor that obeys SIGINT at once;
- `adopt` finds again only the lanes this same object started (a real one looks at processes or jobs);
- no pid: `start` answers None for every lane, as the Ray executor does;
- `wait_any` and `wait_all` return at once: nothing ends unless the test ends it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from bot.domain.errors import InfraError
from bot.domain.outcome import EXIT_UNKNOWN
from bot.executors.base import RUNNING, UNSEEN, Adopted, ExecutorContext, LaneLaunch, LaneRef, Seen, ended

SIGINT_EXIT = 130
SIGKILL_EXIT = 137


class FakeExecutor:
    def __init__(self, context: ExecutorContext) -> None:
        self._repo = context.repo
        self.launches: dict[int, LaneLaunch] = {}  # every lane started here, by lane id
        self.exits: dict[int, int] = {}  # lane id → exit code, once ended
        self.stops: list[tuple[int, str]] = []  # (lane id, "interrupt" or "kill"), in order
        self.away: str | None = None  # set: `unavailable` says this, and no lane starts
        self.refuse: str | None = None  # set: `start` answers this InfraError for every lane
        self.refused: list[LaneLaunch] = []  # the launches it answered so
        self.on_exit: Callable[[], None] | None = None

    def end(self, lane_id: int, exit_code: int = 0) -> None:
        """The lane's process ended now (between ticks), as a real one would."""
        self.exits[lane_id] = exit_code
        if self.on_exit is not None:
            self.on_exit()

    def running(self) -> list[int]:
        return [lane_id for lane_id in self.launches if lane_id not in self.exits]

    async def start(self, launches: Sequence[LaneLaunch]) -> list[int | InfraError | None]:
        if self.refuse is not None:
            self.refused += launches
            return [InfraError(self.refuse) for _ in launches]
        for launch in launches:
            self.launches[launch.lane_id] = launch
        return [None for _ in launches]

    async def unavailable(self) -> str | None:
        return self.away

    async def observe(self, lanes: Collection[LaneRef]) -> dict[int, Seen]:
        return {lane.id: self._seen(lane.id) for lane in lanes}

    def _seen(self, lane_id: int) -> Seen:
        if lane_id not in self.launches:
            return UNSEEN
        return RUNNING if lane_id not in self.exits else ended(self.exits[lane_id])

    async def interrupt(self, lane: LaneRef) -> None:
        self._stop(lane.id, "interrupt", SIGINT_EXIT)

    async def kill(self, lane: LaneRef) -> None:
        self._stop(lane.id, "kill", SIGKILL_EXIT)

    def _stop(self, lane_id: int, how: str, exit_code: int) -> None:
        if lane_id in self.launches and lane_id not in self.exits:
            self.stops.append((lane_id, how))
            self.exits[lane_id] = exit_code

    async def adopt(self, lanes: Sequence[LaneRef]) -> Adopted:
        adopted = Adopted()
        for lane in lanes:
            if lane.id in self.launches and lane.id not in self.exits:
                adopted.running[lane.id] = None
            else:
                self.exits.setdefault(lane.id, EXIT_UNKNOWN)
                self.launches.setdefault(lane.id, _unknown(lane.id, self.log_path(lane)))
                adopted.ended.append(lane.id)
        return adopted

    def log_path(self, lane: LaneRef) -> Path:
        return self._repo / lane.log_path

    def forget(self, lane_id: int) -> None:
        self.launches.pop(lane_id, None)
        self.exits.pop(lane_id, None)

    async def close(self) -> None:
        return None

    @property
    def running_count(self) -> int:
        return len(self.running())

    async def wait_any(self, *, quiet: float = 0.0, longest: float = 0.0) -> None:
        return None

    async def wait_all(self) -> None:
        return None


def _unknown(lane_id: int, log_path: Path) -> LaneLaunch:
    """A lane found by `adopt` that this object never started: nothing is known of its command."""
    return LaneLaunch(lane_id=lane_id, argv=(), cwd=log_path.parent, env={}, log_path=log_path)
