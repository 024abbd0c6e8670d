"""What a run's lanes add up to, as `/csb runs`, App Home and the report's comparison read them.

A finished or cancelled run never changes again, so the store keeps these figures beside it when it
closes (`bot/store/summaries.py`) and the answers over a year of history read one row per run instead
of every lane. The same functions give the figures of a run still under way, from its lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.domain.compare import TaskResult
from bot.domain.integrity import InvalidRule, pair_invalidity
from bot.domain.manifest_names import manifest_task_key
from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole
from bot.domain.states import COMPLETED_LANE_STATES
from bot.domain.verdict import ManifestStatus, stored_verdict

_VALID = frozenset({ManifestStatus.PASSED, ManifestStatus.FAILED})
_STATUS_OF = {LaneStatus.PASSED: ManifestStatus.PASSED, LaneStatus.FAILED: ManifestStatus.FAILED}


class SummedLane(Protocol):
    """The lane fields the figures read (the store's lane record has them)."""

    @property
    def pair_index(self) -> int: ...
    @property
    def task_id(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def config(self) -> str: ...
    @property
    def state(self) -> LaneStatus: ...
    @property
    def reward(self) -> float | None: ...
    @property
    def cost_usd(self) -> float | None: ...
    @property
    def input_tokens(self) -> int | None: ...
    @property
    def output_tokens(self) -> int | None: ...
    @property
    def verdict_json(self) -> str | None: ...


@dataclass(frozen=True)
class Headline:
    """One role's valid results: how many passed, how many count, their mean reward."""

    passed: int
    valid: int
    mean_reward: float | None


@dataclass(frozen=True)
class LaneTally:
    """One role's lanes, and how many of them passed (App Home's "k/n passed")."""

    passed: int
    lanes: int


@dataclass(frozen=True)
class RunFigures:
    """A run's lanes summed: pairs done, each role's headline and tally, lanes by state, what it cost."""

    pairs_done: int
    pairs_total: int
    baseline: Headline
    mcp: Headline
    baseline_lanes: LaneTally
    mcp_lanes: LaneTally
    outcomes: tuple[tuple[LaneStatus, int], ...]  # lanes by state, in the states' order
    cost_usd: float
    input_tokens: int
    output_tokens: int


def lane_result(lane: SummedLane) -> TaskResult | None:
    """The MANIFEST's status from the stored verdict (else from the lane's state), and the first curation
    rule other than `errored` the lane breaks; None for a lane that never ran to an end."""
    if lane.state not in COMPLETED_LANE_STATES:
        return None
    verdict = stored_verdict(lane.verdict_json)
    role = LaneRole(lane.role)
    reward: float | None
    if verdict is not None:
        status, reward = verdict.manifest_status, verdict.manifest_reward
    else:
        status, reward = _STATUS_OF.get(lane.state, ManifestStatus.ERRORED), lane.reward
    rules = pair_invalidity(verdict, None) if role is LaneRole.BASELINE else pair_invalidity(None, verdict)
    invalid = next((r.rule.value for r in rules if r.rule is not InvalidRule.MANIFEST_ERRORED), None)
    return TaskResult(
        task=lane.task_id,
        suite=lane.suite,
        config=lane.config,
        role=role,
        status=status,
        reward=reward,
        cost_usd=lane.cost_usd,
        invalid=invalid,
    )


def valid_lanes(lanes: Sequence[SummedLane]) -> tuple[tuple[str, str, str], ...]:
    """(suite, config, the MANIFEST's task key) of each lane whose result CSB's curation rules keep as a
    valid run: passed or failed, breaking no rule (what `/csb coverage --staging` counts)."""
    return tuple(
        (lane.suite, lane.config, manifest_task_key(lane.task_id))
        for lane in lanes
        if (result := lane_result(lane)) is not None and result.status in _VALID and result.invalid is None
    )


def headline(results: Sequence[TaskResult]) -> Headline:
    valid = [r for r in results if r.counts]
    mean = sum(r.score for r in valid) / len(valid) if valid else None
    return Headline(passed=sum(r.passed for r in valid), valid=len(valid), mean_reward=mean)


def ran_to_the_end(state: LaneStatus) -> bool:
    """A cancelled lane ended without a result: its pair is not counted as done."""
    return state.is_final and state is not LaneStatus.CANCELLED


def pair_counts(lanes: Sequence[tuple[int, LaneStatus]]) -> tuple[int, int]:
    """(pairs done, pairs) of a run's lanes given as (pair index, state)."""
    done: dict[int, bool] = {}
    for pair, state in lanes:
        done[pair] = done.get(pair, True) and ran_to_the_end(state)
    return sum(done.values()), len(done)


def run_figures(lanes: Sequence[SummedLane]) -> RunFigures:
    results = [result for lane in lanes if (result := lane_result(lane)) is not None]
    pairs_done, pairs_total = pair_counts([(lane.pair_index, lane.state) for lane in lanes])
    by_state = {state: 0 for state in LaneStatus}
    for lane in lanes:
        by_state[lane.state] += 1
    return RunFigures(
        pairs_done=pairs_done,
        pairs_total=pairs_total,
        baseline=headline([r for r in results if r.role is LaneRole.BASELINE]),
        mcp=headline([r for r in results if r.role is LaneRole.MCP]),
        baseline_lanes=_tally(lanes, LaneRole.BASELINE),
        mcp_lanes=_tally(lanes, LaneRole.MCP),
        outcomes=tuple((state, n) for state, n in by_state.items() if n),
        cost_usd=sum(lane.cost_usd or 0.0 for lane in lanes),
        input_tokens=sum(lane.input_tokens or 0 for lane in lanes),
        output_tokens=sum(lane.output_tokens or 0 for lane in lanes),
    )


def _tally(lanes: Sequence[SummedLane], role: LaneRole) -> LaneTally:
    mine = [lane for lane in lanes if lane.role == role.value]
    return LaneTally(passed=sum(1 for lane in mine if lane.state is LaneStatus.PASSED), lanes=len(mine))
