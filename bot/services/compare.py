"""`/csb compare` and `/csb runs`, and the comparison with official every finished run's report carries.

A run's side comes from the database only (its lanes' stored results and verdicts, as the report reads
them); `official` from the checkout's MANIFEST, restricted to the other side's suites and lane configs.
The statistics (10,000 bootstrap resamples) and the MANIFEST's parse run in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bot.csb.harbor_run import AGENT_IMPORT_PATH
from bot.csb.json_file import UnreadableJson
from bot.csb.official_side import NoManifest, official_side, read_manifest
from bot.domain.command_line import COMPARE_USAGE
from bot.domain.compare import RESAMPLES, Comparison, LaneChoice, Side, TaskResult, compare
from bot.domain.errors import InfraError, UserInputError
from bot.domain.integrity import InvalidRule, pair_invalidity
from bot.domain.outcome import LaneStatus
from bot.domain.policy import PolicyConfig, may_see
from bot.domain.spec import Category, LaneRole, RunSpec
from bot.domain.states import COMPLETED_LANE_STATES, RunState
from bot.domain.verdict import ManifestStatus, stored_verdict
from bot.services.compare_args import CompareArgs, RunsArgs
from bot.services.queries import Viewer
from bot.store import history, runs
from bot.store.db import Store
from bot.store.records import Lane, Run, RunRequest

SCAN_LIMIT = 500  # finished runs `/csb runs` filters, newest first
_STATUS_OF = {LaneStatus.PASSED: ManifestStatus.PASSED, LaneStatus.FAILED: ManifestStatus.FAILED}


@dataclass(frozen=True)
class LaneHeadline:
    passed: int
    valid: int
    mean_reward: float | None


@dataclass(frozen=True)
class RunLine:
    """One finished run for `/csb runs`: its valid results per role."""

    run_id: int
    title: str
    model: str
    finished_at: datetime | None
    baseline: LaneHeadline
    mcp: LaneHeadline


class CompareService:
    """Runs are shown as `/csb status` shows them (`may_see`): in their channel, or to their requester,
    approvers and admins."""

    def __init__(self, store: Store, repo: Path, policy: PolicyConfig) -> None:
        self._store = store
        self._repo = repo
        self._policy = policy

    async def compare(self, args: CompareArgs, viewer: Viewer) -> Comparison:
        """The comparison, or a UserInputError that says which side is wrong."""
        run_a = await self._run_side(args.a, viewer) if args.a is not None else None
        run_b = await self._run_side(args.b, viewer) if args.b is not None else None
        known = run_a or run_b
        assert known is not None  # the parser refuses official against official
        a = run_a or await self._official(known, args.lanes)
        b = run_b or await self._official(known, args.lanes)
        result = await asyncio.to_thread(compare, a, b, args.lanes)
        if not result.pairs:
            lanes = (
                "in the same lane config" if args.lanes is LaneChoice.CONFIG else f"in the {args.lanes} lanes"
            )
            raise UserInputError(f"{_name(a)} and {_name(b)} share no task {lanes}", hint=COMPARE_USAGE)
        return result

    async def runs(self, args: RunsArgs, viewer: Viewer) -> list[RunLine]:
        """Finished runs the viewer may see, newest first, filtered by suite and model (a case-insensitive
        part of it)."""
        async with self._store.read() as session:
            found = await history.finished_runs(session, SCAN_LIMIT)
            lines = []
            for run, request in found:
                if not self._may_see(request, viewer):
                    continue
                spec = request.spec
                if args.suite and args.suite != spec.params.suite and args.suite not in spec.suites:
                    continue
                if args.model and args.model.lower() not in spec.params.model.lower():
                    continue
                lanes = await runs.run_lanes(session, run.id)
                lines.append(run_line(run, spec, lanes))
                if len(lines) >= args.last:
                    break
        return lines

    def _may_see(self, request: RunRequest, viewer: Viewer) -> bool:
        in_channel = viewer.channel_id == request.channel_id
        return may_see(self._policy, Category(request.category), viewer.actor, request.requester, in_channel)

    async def _run_side(self, run_id: int, viewer: Viewer) -> Side:
        async with self._store.read() as session:
            found = await history.run_with_request(session, run_id)
            if found is None:
                raise UserInputError(f"run #{run_id} does not exist", hint=COMPARE_USAGE)
            run, request = found
            if not self._may_see(request, viewer):
                raise UserInputError(
                    f"run #{run_id} is shown only in its own channel, to its requester, approvers and admins",
                    hint=COMPARE_USAGE,
                )
            if run.state is not RunState.FINISHED:
                raise UserInputError(
                    f"run #{run_id} is not finished (it is {run.state.value})", hint=COMPARE_USAGE
                )
            lanes = await runs.run_lanes(session, run_id)
        return run_side(run, request, lanes)

    async def _official(self, other: Side, lanes: LaneChoice) -> Side:
        try:
            manifest = await asyncio.to_thread(read_manifest, self._repo)
        except NoManifest:
            raise UserInputError(
                "no official results: the CSB checkout has no runs/official/MANIFEST.json", hint=COMPARE_USAGE
            ) from None
        except (OSError, UnreadableJson) as exc:
            raise InfraError(f"runs/official/MANIFEST.json cannot be read: {exc}") from None
        configs = {r.config for r in other.results} if lanes is LaneChoice.CONFIG else None
        return official_side(manifest, other.suites, configs)


def official_comparison(repo: Path, run: Side, resamples: int = RESAMPLES) -> Comparison | None:
    """The run against official on the same suites and lane configs; None when the checkout has no
    MANIFEST (or an unreadable one) or it shares no result with the run (`resamples` 0: no bootstrap,
    for the card's warning). Blocking: run it in a worker."""
    try:
        manifest = read_manifest(repo)
    except (NoManifest, OSError, UnreadableJson):
        return None
    official = official_side(manifest, run.suites, {r.config for r in run.results})
    result = compare(run, official, resamples=resamples)
    return result if result.pairs else None


def run_side(run: Run, request: RunRequest, lanes: Sequence[Lane]) -> Side:
    """A finished run's lanes as one side: each lane that ran to an end, in CSB's MANIFEST vocabulary."""
    spec = request.spec
    results = tuple(result for lane in lanes if (result := lane_result(lane)) is not None)
    return Side(
        label=f"#{run.id}",
        results=results,
        model=spec.params.model,
        agent=AGENT_IMPORT_PATH,
        suite_file=spec.task_file,
        spec_hash=request.spec_hash,
    )


def lane_result(lane: Lane) -> TaskResult | None:
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


def run_line(run: Run, spec: RunSpec, lanes: Sequence[Lane]) -> RunLine:
    results = [result for lane in lanes if (result := lane_result(lane)) is not None]
    return RunLine(
        run_id=run.id,
        title=spec.suite_label,
        model=spec.params.model,
        finished_at=run.finished_at,
        baseline=_headline([r for r in results if r.role is LaneRole.BASELINE]),
        mcp=_headline([r for r in results if r.role is LaneRole.MCP]),
    )


def _headline(results: Sequence[TaskResult]) -> LaneHeadline:
    valid = [r for r in results if r.counts]
    mean = sum(r.score for r in valid) / len(valid) if valid else None
    return LaneHeadline(passed=sum(r.passed for r in valid), valid=len(valid), mean_reward=mean)


def _name(side: Side) -> str:
    return side.label if side.label == "official" else f"run {side.label}"
