"""`/csb coverage`: the selected tasks' valid runs per lane against a target, and CSB's variance waves.

Counts come from the MANIFEST's `run_history` (the runs `generate_manifest.py` keeps as valid) and, with
`--staging`, from the finished staging runs the asker may see, each lane counted when the integrity rules
leave it valid (the MANIFEST's status `passed` or `failed` and no curation rule broken).
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass
from pathlib import Path

from bot.csb.coverage_files import (
    History,
    NoManifest,
    OfficialHistory,
    Selection,
    manifest_history,
    read_selection,
)
from bot.csb.harbor_run import run_folder_names
from bot.csb.verdicts.config_names import is_mcp_config
from bot.domain.command_line import COVERAGE_USAGE
from bot.domain.coverage import Coverage, SelectedTask, count_runs, coverage
from bot.domain.errors import UserInputError
from bot.domain.manifest_names import manifest_task_key
from bot.domain.policy import PolicyConfig, may_see
from bot.domain.spec import Category
from bot.domain.verdict import ManifestStatus
from bot.services.compare import SCAN_LIMIT, lane_result
from bot.services.coverage_args import CoverageArgs
from bot.services.queries import Viewer
from bot.store import history, runs
from bot.store.db import Store

_VALID = frozenset({ManifestStatus.PASSED, ManifestStatus.FAILED})


@dataclass(frozen=True)
class CoverageAnswer:
    coverage: Coverage
    selection: str  # the selection file's path in the checkout
    excluded: int  # tasks the selection marks excluded, left out
    manifest: bool  # whether the checkout has a MANIFEST (else official runs count as none)
    staging_runs: int | None  # finished staging runs counted; None without --staging
    model: str | None


class CoverageService:
    def __init__(self, store: Store, repo: Path, policy: PolicyConfig) -> None:
        self._store = store
        self._repo = repo
        self._policy = policy

    async def coverage(self, args: CoverageArgs, viewer: Viewer) -> CoverageAnswer:
        selection, official, has_manifest = await asyncio.to_thread(self._read)
        tasks = _chosen(selection, args.suites)
        rows = list(official.rows)
        staging_runs = None
        if args.staging:
            staging, staging_runs = await self._staging(args.model, viewer, official.run_dirs)
            rows.extend(staging)
        configs = {config for _suite, config, _task, _runs in rows}
        counts, extended = count_runs(rows, {config: is_mcp_config(config) for config in configs})
        return CoverageAnswer(
            coverage=coverage(tasks, counts, args.target, extended),
            selection=selection.path,
            excluded=selection.excluded,
            manifest=has_manifest,
            staging_runs=staging_runs,
            model=args.model,
        )

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
        rows: History = []
        counted = 0
        async with self._store.read() as session:
            for run, request in await history.finished_runs(session, SCAN_LIMIT):
                category = Category(request.category)
                if category is not Category.STAGING:
                    continue
                in_channel = viewer.channel_id == request.channel_id
                if not may_see(self._policy, category, viewer.actor, request.requester, in_channel):
                    continue
                if model and model.lower() not in request.spec.params.model.lower():
                    continue
                lanes = await runs.run_lanes(session, run.id)
                if official_dirs.intersection(run_folder_names(run.run_dir, {lane.suite for lane in lanes})):
                    continue
                counted += 1
                for lane in lanes:
                    result = lane_result(lane)
                    if result is not None and result.status in _VALID and result.invalid is None:
                        rows.append((lane.suite, lane.config, manifest_task_key(lane.task_id), 1))
        return rows, counted


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
