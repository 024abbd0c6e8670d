"""`/csb coverage`: the selected tasks' valid runs per lane against a target, and CSB's variance waves.

Counts come from the MANIFEST's `run_history` (the runs `generate_manifest.py` keeps as valid) and, with
`--staging`, from the finished staging runs the asker may see, each lane counted when the integrity rules
leave it valid (the MANIFEST's status `passed` or `failed` and no curation rule broken).
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass, replace
from pathlib import Path

from bot.csb.coverage_files import (
    GAP_FILL_DIR,
    VARIANCE_DIR,
    History,
    NoManifest,
    OfficialHistory,
    Selection,
    manifest_history,
    read_selection,
    stamp,
    write_wave,
)
from bot.csb.harbor_run import run_folder_names
from bot.csb.verdicts.config_names import is_mcp_config
from bot.domain.clock import Clock
from bot.domain.command_line import COVERAGE_USAGE
from bot.domain.coverage import Coverage, SelectedTask, Wave, WaveMode, count_runs, coverage
from bot.domain.errors import PolicyError, UserInputError
from bot.domain.policy import Actor, PolicyConfig, may_request, may_see
from bot.domain.spec import Category, Mode, RunParams
from bot.domain.verdict import ManifestStatus
from bot.domain.words import plural
from bot.services.compare import SCAN_LIMIT
from bot.services.coverage_args import CoverageArgs
from bot.services.queries import Viewer
from bot.services.requests import RunRequestService
from bot.store import summaries
from bot.store.db import Store

_VALID = frozenset({ManifestStatus.PASSED, ManifestStatus.FAILED})
# A gap-fill file's description: where its tasks have no valid run (CSB's metadata, not a Slack reply).
_LACKING = {
    WaveMode.BOTH: "on either lane",
    WaveMode.BASELINE_ONLY: "on the baseline lane",
    WaveMode.MCP_ONLY: "on the MCP lane",
}
MODE_OF = {
    WaveMode.BOTH: Mode.PAIRED,
    WaveMode.BASELINE_ONLY: Mode.BASELINE_ONLY,
    WaveMode.MCP_ONLY: Mode.FULL_ONLY,
}


@dataclass(frozen=True)
class CoverageAnswer:
    coverage: Coverage
    selection: str  # the selection file's path in the checkout
    excluded: int  # tasks the selection marks excluded, left out
    manifest: bool  # whether the checkout has a MANIFEST (else official runs count as none)
    staging_runs: int | None  # finished staging runs counted; None without --staging
    model: str | None

    @property
    def has_gaps(self) -> bool:
        """Whether some task has no valid run on a lane: what `--fill` asks for."""
        return any(any(suite.without.values()) for suite in self.coverage.suites)


@dataclass(frozen=True)
class WaveRequest:
    wave: Wave
    selection_file: str  # written for it, from the checkout root
    request_id: int


class CoverageService:
    def __init__(
        self, store: Store, repo: Path, policy: PolicyConfig, submitter: RunRequestService, clock: Clock
    ) -> None:
        self._store = store
        self._repo = repo
        self._policy = policy
        self._submitter = submitter
        self._clock = clock

    async def coverage(self, args: CoverageArgs, viewer: Viewer) -> CoverageAnswer:
        return (await self._compute(args, viewer))[0]

    async def request_waves(
        self,
        args: CoverageArgs,
        viewer: Viewer,
        *,
        actor: Actor,
        response_url: str | None,
        trigger_id: str | None,
    ) -> list[WaveRequest]:
        """`--fill`: a request per lane choice over the tasks with no valid run on a lane (the waves of a
        target of one); `--plan`: a request per wave of CSB's plan to the target. Each wave's selection
        file is written in CSB's shape, then resolved and submitted as `/csb run --selection-file` would
        be, so each gets the normal approval card (and a one-lane wave the pairing guard's check)."""
        verdict = may_request(self._policy, Category.STAGING, actor, viewer.channel_id)
        if not verdict.allowed:  # before any file is written: a refused request leaves nothing behind
            raise PolicyError(verdict.reason)
        answer, selection = await self._compute(replace(args, target=1) if args.fill else args, viewer)
        waves = answer.coverage.waves
        if not waves:
            raise UserInputError(
                f"nothing to request: every task already has {plural(answer.coverage.target, 'valid run')} "
                "on both lanes",
                hint=COVERAGE_USAGE,
            )
        made = []
        now = stamp(self._clock.now())
        for index, wave in enumerate(waves):
            if args.fill:
                folder, stem = GAP_FILL_DIR, f"gap_fill_{wave.mode.value}_{now}"
                description = f"Gap fill: tasks with no valid run {_LACKING[wave.mode]}"
            else:
                folder, stem = VARIANCE_DIR, f"wave{wave.number}_{wave.mode.value}_{now}"
                description = f"Variance wave {wave.number} ({wave.mode.value}) to {args.target} runs"
            rel = await asyncio.to_thread(write_wave, self._repo, selection, wave, folder, stem, description)
            spec = await self._submitter.resolve(RunParams(selection_file=rel, mode=MODE_OF[wave.mode]))
            request_id = await self._submitter.submit(
                spec,
                actor=actor,
                channel_id=viewer.channel_id,
                response_url=response_url,
                trigger_id=f"{trigger_id}#{index}" if trigger_id else None,  # one request per wave, once
            )
            made.append(WaveRequest(wave, rel, request_id))
        return made

    async def _compute(self, args: CoverageArgs, viewer: Viewer) -> tuple[CoverageAnswer, Selection]:
        selection, official, has_manifest = await asyncio.to_thread(self._read)
        tasks = _chosen(selection, args.suites)
        rows = list(official.rows)
        staging_runs = None
        if args.staging:
            staging, staging_runs = await self._staging(args.model, viewer, official.run_dirs)
            rows.extend(staging)
        configs = {config for _suite, config, _task, _runs in rows}
        counts, extended = count_runs(rows, {config: is_mcp_config(config) for config in configs})
        answer = CoverageAnswer(
            coverage=coverage(tasks, counts, args.target, extended),
            selection=selection.path,
            excluded=selection.excluded,
            manifest=has_manifest,
            staging_runs=staging_runs,
            model=args.model,
        )
        return answer, selection

    def _read(self) -> tuple[Selection, OfficialHistory, bool]:
        selection = read_selection(self._repo)
        try:
            return selection, manifest_history(self._repo), True
        except NoManifest:
            return selection, OfficialHistory([], frozenset()), False

    async def _staging(
        self, model: str | None, viewer: Viewer, official_dirs: frozenset[str]
    ) -> tuple[History, int]:
        """Valid lanes of the finished staging runs the viewer may see; a run whose folder the MANIFEST
        already counts (it was promoted, or copied there) is counted once, as official."""
        async with self._store.read() as session:
            chosen = [
                run
                for run in await summaries.finished_folders(session, SCAN_LIMIT)
                if Category(run.category) is Category.STAGING
                and may_see(
                    self._policy,
                    Category.STAGING,
                    viewer.actor,
                    run.requester,
                    viewer.channel_id == run.channel_id,
                )
                and (not model or model.lower() in run.model.lower())
                and not official_dirs.intersection(run_folder_names(run.run_dir, run.suites))
            ]
            runs = await summaries.valid_lane_counts(session, [run.run_id for run in chosen])
        return [(suite, config, task, n) for (suite, config, task), n in runs.items()], len(chosen)


def _chosen(selection: Selection, suites: tuple[str, ...]) -> tuple[SelectedTask, ...]:
    known = list(dict.fromkeys(task.suite for task in selection.tasks))
    for suite in suites:
        if suite not in known:
            close = difflib.get_close_matches(suite, known, n=1)
            raise UserInputError(
                f"`{suite[:60]}` is not a suite of `{selection.path}`"
                + (f"; did you mean `{close[0]}`?" if close else f"; its suites: {', '.join(known[:12])}"),
                hint=COVERAGE_USAGE,
            )
    return tuple(task for task in selection.tasks if not suites or task.suite in suites)
