"""Coverage and variance: how many valid runs each selected task has per lane, and the waves that would
bring every task to a target, by the rules of CSB's `plan_variance_runs.py`.

CSB's planner counts a task's runs per `(suite, task id lowercased)` from the MANIFEST's `run_history`,
merging configs into two sides: baseline (`baseline`, `baseline-local-direct`, `baseline-local-artifact`)
and MCP (`mcp`, `mcp-remote-direct`, `mcp-remote-artifact`); other configs (`sourcegraph_full` among them)
it does not count. A task's deficit on a side is `max(0, target - runs)`. Wave `w` (1 … target) holds, per
task: both lanes when both deficits are at least `w`, baseline only when only the baseline deficit is, MCP
only when only the MCP deficit is; the plan stops at the first empty wave.

The bot extends the MCP side to every config `is_mcp_config` names (the current lanes and the legacy
`sourcegraph_*` ones), and labels that extension where it shows the numbers (`extended_configs`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from bot.domain.spec import LaneRole

DEFAULT_TARGET = 3  # CSB's `--target` default
MAX_TARGET = 20  # a variance target beyond this is a typo, not a plan (the bot's bound)

# plan_variance_runs.py's sides, config for config.
CSB_BASELINE_CONFIGS = frozenset({"baseline", "baseline-local-direct", "baseline-local-artifact"})
CSB_MCP_CONFIGS = frozenset({"mcp", "mcp-remote-direct", "mcp-remote-artifact"})


class WaveMode(StrEnum):
    """A wave's lanes, named as CSB's planner names its selection files (`wave1_both.json`, ...)."""

    BOTH = "both"
    BASELINE_ONLY = "baseline_only"
    MCP_ONLY = "mcp_only"


@dataclass(frozen=True)
class SelectedTask:
    """One task of the selection: its suite, its id, and its index in the file (so the task object can be
    copied into a gap-fill file exactly as it is)."""

    suite: str
    task_id: str
    index: int

    @property
    def key(self) -> tuple[str, str]:
        return self.suite, self.task_id.lower()


@dataclass(frozen=True)
class RunCounts:
    baseline: int = 0
    mcp: int = 0

    def of(self, side: LaneRole) -> int:
        return self.baseline if side is LaneRole.BASELINE else self.mcp


@dataclass(frozen=True)
class TaskGap:
    task: SelectedTask
    counts: RunCounts
    baseline_deficit: int
    mcp_deficit: int


@dataclass(frozen=True)
class Wave:
    number: int
    mode: WaveMode
    tasks: tuple[SelectedTask, ...]

    @property
    def lanes(self) -> int:
        return len(self.tasks) * (2 if self.mode is WaveMode.BOTH else 1)


@dataclass(frozen=True)
class SuiteCoverage:
    """One suite: per side, the valid runs done against the runs the target asks, and the tasks with none."""

    suite: str
    tasks: int
    runs: RunCounts  # valid runs counted, capped at the target per task
    expected: int  # tasks × target, per side
    without: Mapping[LaneRole, tuple[str, ...]]  # task ids with no valid run on that side
    deficit: RunCounts  # runs still needed to reach the target


@dataclass(frozen=True)
class Coverage:
    target: int
    suites: tuple[SuiteCoverage, ...]
    gaps: tuple[TaskGap, ...]
    waves: tuple[Wave, ...]
    extended_configs: tuple[str, ...]  # MCP configs counted that CSB's planner does not count


def side_of(config: str, is_mcp: bool) -> LaneRole | None:
    """The side CSB's planner counts `config` on, or the MCP side for another MCP config (the bot's
    extension); None for a config neither counts (a baseline variant CSB does not list, a bare name)."""
    if config in CSB_BASELINE_CONFIGS:
        return LaneRole.BASELINE
    if config in CSB_MCP_CONFIGS or is_mcp:
        return LaneRole.MCP
    return None


def count_runs(
    history: Iterable[tuple[str, str, str, int]], is_mcp: Mapping[str, bool]
) -> tuple[dict[tuple[str, str], RunCounts], tuple[str, ...]]:
    """Valid runs per `(suite, task id lowercased)` and side, from `(suite, config, task, runs)` rows; the
    MCP configs counted beyond CSB's list come back as the second value, sorted."""
    totals: dict[tuple[str, str], dict[LaneRole, int]] = defaultdict(
        lambda: {LaneRole.BASELINE: 0, LaneRole.MCP: 0}
    )
    extended: set[str] = set()
    for suite, config, task, runs in history:
        side = side_of(config, is_mcp.get(config, False))
        if side is None or runs <= 0:
            continue
        if side is LaneRole.MCP and config not in CSB_MCP_CONFIGS:
            extended.add(config)
        totals[(suite, task.lower())][side] += runs
    counts = {key: RunCounts(t[LaneRole.BASELINE], t[LaneRole.MCP]) for key, t in totals.items()}
    return counts, tuple(sorted(extended))


def task_gaps(
    tasks: Iterable[SelectedTask], counts: Mapping[tuple[str, str], RunCounts], target: int
) -> tuple[TaskGap, ...]:
    """The tasks below the target on either side, in selection order."""
    gaps = []
    for task in tasks:
        current = counts.get(task.key, RunCounts())
        baseline, mcp = max(0, target - current.baseline), max(0, target - current.mcp)
        if baseline or mcp:
            gaps.append(TaskGap(task, current, baseline, mcp))
    return tuple(gaps)


def plan_waves(gaps: Iterable[TaskGap], target: int) -> tuple[Wave, ...]:
    """CSB's waves: for w in 1 … target, the three selections of wave w, stopping at the first empty wave;
    a wave's empty selections are left out."""
    gaps = tuple(gaps)
    waves: list[Wave] = []
    for number in range(1, target + 1):
        chosen = {mode: tuple(g.task for g in gaps if _in_wave(g, number, mode)) for mode in WaveMode}
        if not any(chosen.values()):
            break
        waves.extend(Wave(number, mode, tasks) for mode, tasks in chosen.items() if tasks)
    return tuple(waves)


def _in_wave(gap: TaskGap, wave: int, mode: WaveMode) -> bool:
    baseline, mcp = gap.baseline_deficit >= wave, gap.mcp_deficit >= wave
    if mode is WaveMode.BOTH:
        return baseline and mcp
    if mode is WaveMode.BASELINE_ONLY:
        return baseline and not mcp
    return mcp and not baseline


def coverage(
    tasks: Iterable[SelectedTask],
    counts: Mapping[tuple[str, str], RunCounts],
    target: int,
    extended_configs: tuple[str, ...] = (),
) -> Coverage:
    """Per suite (in the selection's order of first appearance), the gaps and the waves."""
    tasks = tuple(tasks)
    by_suite: dict[str, list[SelectedTask]] = {}
    for task in tasks:
        by_suite.setdefault(task.suite, []).append(task)
    gaps = task_gaps(tasks, counts, target)
    suites = tuple(_suite(suite, members, counts, target) for suite, members in by_suite.items())
    return Coverage(target, suites, gaps, plan_waves(gaps, target), extended_configs)


def _suite(
    suite: str, tasks: list[SelectedTask], counts: Mapping[tuple[str, str], RunCounts], target: int
) -> SuiteCoverage:
    found = [counts.get(task.key, RunCounts()) for task in tasks]
    done = {side: sum(min(target, c.of(side)) for c in found) for side in LaneRole}
    expected = len(tasks) * target
    without = {
        side: tuple(t.task_id for t, c in zip(tasks, found, strict=True) if c.of(side) == 0)
        for side in LaneRole
    }
    return SuiteCoverage(
        suite=suite,
        tasks=len(tasks),
        runs=RunCounts(done[LaneRole.BASELINE], done[LaneRole.MCP]),
        expected=expected,
        without=without,
        deficit=RunCounts(expected - done[LaneRole.BASELINE], expected - done[LaneRole.MCP]),
    )
