"""`/csb promote <run>` and `/csb official [suite]`: CSB's promotion dry run and the official results.

The preview is `promote_run.py` without `--execute`, for each of the run's folders, plus what CSB's
scripts never show: the MANIFEST diff the move would make and the tasks the quarantine rule would set
aside. Nothing is written: the staging folders and `runs/official` are only read.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.csb.harbor_run import run_folder_names
from bot.csb.paths import RUNS_DIR, inside
from bot.csb.promotion.destination import destination
from bot.csb.promotion.digest import promotion_digest, touched_entries
from bot.csb.promotion.execute import EXTRACT_SCRIPTS
from bot.csb.promotion.gates import check_folder, check_gates
from bot.csb.promotion.layout import MANIFEST_NAME, OFFICIAL, STAGING, official_runs_dir
from bot.csb.promotion.manifest_diff import official_folders, promotion_diff
from bot.csb.promotion.manifest_file import ManifestUnreadable, read_manifest
from bot.csb.promotion.official import MANIFEST_PATH, official_lines
from bot.csb.promotion.quarantine import candidates
from bot.domain.clock import Clock
from bot.domain.command_line import OFFICIAL_USAGE, PROMOTE_USAGE
from bot.domain.errors import InfraError, UserInputError
from bot.domain.policy import PolicyConfig, may_see
from bot.domain.promotion import FolderPreview, FolderRefusal, OfficialLine, PromoteConfig, PromotionPreview
from bot.domain.spec import Category
from bot.domain.states import RunState
from bot.services.queries import Viewer
from bot.store import requests, runs
from bot.store.db import Store

# The checkout's copy of CSB's script that writes missing task_metrics.json (current layout, then flat).


class PromotionService:
    def __init__(
        self, store: Store, repo: Path, policy: PolicyConfig, config: PromoteConfig, clock: Clock
    ) -> None:
        self._store = store
        self._repo = repo
        self._policy = policy
        self._config = config
        self._clock = clock

    async def preview(self, run_id: int, viewer: Viewer, *, force: bool = False) -> PromotionPreview:
        """CSB's dry run of the run's promotion; UserInputError when the run cannot be promoted at all.
        `force`: destinations by `--force`'s rule (a taken one gets a `__promoted_<stamp>` suffix)."""
        async with self._store.read() as session:
            run = await runs.get_run(session, run_id)
            if run is None:
                raise UserInputError(f"there is no run #{run_id}", hint=PROMOTE_USAGE)
            request = await requests.get_request(session, run.request_id)
            assert request is not None
            in_channel = viewer.channel_id == request.channel_id
            category = Category(request.category)
            if not may_see(self._policy, category, viewer.actor, request.requester, in_channel):
                raise UserInputError(f"run #{run_id} is not yours to see here", hint=PROMOTE_USAGE)
        return await self.current(run_id, force=force)

    async def current(self, run_id: int, *, force: bool = False) -> PromotionPreview:
        """The dry run as the tree is now, for a run already shown to its viewer (an approval's re-check)."""
        async with self._store.read() as session:
            run = await runs.get_run(session, run_id)
            if run is None:
                raise UserInputError(f"there is no run #{run_id}", hint=PROMOTE_USAGE)
            request = await requests.get_request(session, run.request_id)
            assert request is not None
            category = Category(request.category)
            if category is not Category.STAGING:
                raise UserInputError(
                    f"run #{run_id} is an `{category.value}` run: only staging runs are promoted"
                )
            if run.state is not RunState.FINISHED:
                raise UserInputError(
                    f"run #{run_id} is {run.state.value}: only a finished staging run can be promoted"
                )
            suites = [lane.suite for lane in await runs.run_lanes(session, run_id)]
        folders = run_folder_names(run.run_dir, suites)
        return await asyncio.to_thread(self._preview, run_id, folders, force)

    def _preview(self, run_id: int, folders: list[str], force: bool) -> PromotionPreview:
        now = self._clock.now()
        extract = any((self._repo / script).is_file() for script in EXTRACT_SCRIPTS)
        previews: list[FolderPreview] = []
        moving: list[tuple[str, Path]] = []
        for folder in folders:
            path = self._repo / STAGING / folder
            try:
                inside(self._repo / RUNS_DIR, path)
            except InfraError:
                previews.append(FolderPreview(folder=folder, refusal=FolderRefusal.OUT_OF_RUNS))
                continue
            if path.is_symlink() or not path.is_dir():
                refusal = FolderRefusal.LINK if path.is_symlink() else FolderRefusal.MISSING
                previews.append(FolderPreview(folder=folder, refusal=refusal))
                continue
            target = destination(self._repo, folder, force=force, now=now)
            check = check_folder(path, extract_script=extract)
            previews.append(
                FolderPreview(
                    folder=folder,
                    destination=target,
                    gates=check_gates(check, self._config.max_warnings),
                    configs=check.configs,
                    quarantine=candidates(path),
                )
            )
            moving.append((Path(target.path).name, path))
        manifest_path = self._repo / OFFICIAL / MANIFEST_NAME
        problem = None
        entries = None
        try:
            manifest = read_manifest(manifest_path)
            entries = None if manifest is None else manifest.total_tasks
        except ManifestUnreadable as exc:
            problem = str(exc)
        diff = promotion_diff(official_folders(official_runs_dir(self._repo)), moving)
        return PromotionPreview(
            run_id=run_id,
            folders=tuple(previews),
            diff=diff,
            manifest_problem=problem,
            manifest_entries=entries,
            max_warnings=self._config.max_warnings,
            digest=str(promotion_digest([path for _, path in moving], manifest_path, touched_entries(diff))),
        )

    async def official(self, suite: str | None) -> list[OfficialLine]:
        """The MANIFEST's official results per suite and config; UserInputError for an unknown suite."""
        try:
            every = await asyncio.to_thread(official_lines, self._repo)
        except ManifestUnreadable as exc:
            raise UserInputError(str(exc)) from None
        if every is None:
            raise UserInputError(f"there is no `{MANIFEST_PATH}` in the CSB checkout yet")
        lines = [line for line in every if suite is None or line.suite == suite]
        if suite is not None and not lines:
            known = sorted({line.suite for line in every})
            raise UserInputError(
                f"the MANIFEST has no suite `{suite}`; it has: {', '.join(known) or 'none'}",
                hint=OFFICIAL_USAGE,
            )
        return lines
