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
from bot.domain.compare import RESAMPLES, Comparison, LaneChoice, Side, compare
from bot.domain.errors import InfraError, UserInputError
from bot.domain.policy import PolicyConfig, may_see
from bot.domain.run_summary import Headline, SummedLane, lane_result
from bot.domain.spec import Category
from bot.domain.states import RunState
from bot.services.compare_args import CompareArgs, RunsArgs
from bot.services.queries import Viewer
from bot.store import history, summaries
from bot.store.db import Store
from bot.store.records import Run, RunRequest, RunSummary

SCAN_LIMIT = 500  # finished runs `/csb runs` filters, newest first


@dataclass(frozen=True)
class RunLine:
    """One finished run for `/csb runs`: its valid results per role."""

    run_id: int
    title: str
    model: str
    finished_at: datetime | None
    baseline: Headline
    mcp: Headline


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
        part of it). Each is read from its summary, written when it finished: never its lanes or spec."""
        async with self._store.read() as session:
            found = await summaries.finished(session, SCAN_LIMIT)
        lines = []
        for summary in found:
            if not self._may_see_summary(summary, viewer):
                continue
            if args.suite and args.suite != summary.suite and args.suite not in summary.suites:
                continue
            if args.model and args.model.lower() not in summary.model.lower():
                continue
            lines.append(run_line(summary))
            if len(lines) >= args.last:
                break
        return lines

    def _may_see_summary(self, summary: RunSummary, viewer: Viewer) -> bool:
        in_channel = viewer.channel_id == summary.channel_id
        return may_see(self._policy, Category(summary.category), viewer.actor, summary.requester, in_channel)

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
            lanes = await summaries.summed_lanes(session, run_id)  # the columns a result is read from
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


def run_side(run: Run, request: RunRequest, lanes: Sequence[SummedLane]) -> Side:
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


def run_line(summary: RunSummary) -> RunLine:
    figures = summary.figures
    return RunLine(
        run_id=summary.run_id,
        title=summary.suite_label,
        model=summary.model,
        finished_at=summary.finished_at,
        baseline=figures.baseline,
        mcp=figures.mcp,
    )


def _name(side: Side) -> str:
    return side.label if side.label == "official" else f"run {side.label}"
