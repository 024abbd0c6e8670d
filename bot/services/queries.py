"""Read-only questions users ask with `/csb suites`, `/csb status` and `/csb audit` (`/csb accounts`:
`services/accounts.py`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.catalog import Catalog
from bot.csb.configs import accepted_full_configs, load_eval_matrix
from bot.csb.harbor_run import run_folder_names
from bot.domain.command_line import AUDIT_USAGE, STATUS_USAGE
from bot.domain.errors import UserInputError
from bot.domain.policy import Actor, PolicyConfig, may_see
from bot.domain.spec import Category
from bot.domain.states import RunState
from bot.services.checks import CheckRunner
from bot.store import audit, queue, requests, runs
from bot.store.db import Store
from bot.store.records import AuditEvent, Run, RunRequest


@dataclass(frozen=True)
class RunProgress:
    run_id: int
    state: RunState
    run_dir: str
    lanes_total: int
    lanes_done: int
    lanes_running: int
    queue_position: int | None = None
    eta_seconds: float | None = None
    visible: bool = True  # False: shown as one line without parameters (see `may_see`)


@dataclass(frozen=True)
class Viewer:
    """Who asks, and where: what `/csb status` and `/csb audit` may show them."""

    actor: Actor
    channel_id: str


class QueryService:
    def __init__(self, store: Store, catalog: Catalog, checks: CheckRunner, policy: PolicyConfig) -> None:
        self._store = store
        self._catalog = catalog
        self._checks = checks
        self._policy = policy

    async def suites(self) -> tuple[str, dict[str, int]]:
        """The default task file of the checkout and its suite keys with task counts."""
        path = await asyncio.to_thread(self._catalog.default_task_file)
        return path, await asyncio.to_thread(self._catalog.suites, path)

    async def full_configs(self) -> list[str]:
        """The values `--full-config` takes in this checkout (its `configs/eval_matrix.json`)."""
        matrix = await asyncio.to_thread(load_eval_matrix, self._catalog.repo)
        return accepted_full_configs(matrix)

    async def active_runs(self, viewer: Viewer) -> list[RunProgress]:
        async with self._store.read() as session:
            return await self._progress(session, await runs.active_runs(session), viewer)

    async def run_progress(self, run_id: int, viewer: Viewer) -> RunProgress:
        async with self._store.read() as session:
            run = await runs.get_run(session, run_id)
            if run is None:
                raise UserInputError(f"there is no run #{run_id}", hint=STATUS_USAGE)
            return (await self._progress(session, [run], viewer))[0]

    async def audit_trail(
        self, request_id: int, viewer: Viewer
    ) -> tuple[RunRequest, list[AuditEvent] | None]:
        """The request and its trail; None for the trail when the viewer may not see it."""
        async with self._store.read() as session:
            request = await requests.get_request(session, request_id)
            if request is None:
                raise UserInputError(f"there is no request or run #{request_id}", hint=AUDIT_USAGE)
            if not self._may_see(request, viewer):
                return request, None
            return request, await audit.events_for(session, request_id)

    def _may_see(self, request: RunRequest, viewer: Viewer) -> bool:
        in_channel = viewer.channel_id == request.channel_id
        return may_see(self._policy, Category(request.category), viewer.actor, request.requester, in_channel)

    async def _progress(self, session: AsyncSession, of_runs: list[Run], viewer: Viewer) -> list[RunProgress]:
        """The runs' lanes counted and their queue figures, each read once for all of them."""
        counts = await runs.lane_counts(session, [run.id for run in of_runs])
        figures = await queue.queue_figures_of(session, of_runs)
        found = []
        for run in of_runs:
            request = await requests.get_request(session, run.request_id)
            assert request is not None
            lanes = counts[run.id]
            found.append(
                RunProgress(
                    run_id=run.id,
                    state=run.state,
                    run_dir=", ".join(run_folder_names(run.run_dir, lanes.suites)),
                    lanes_total=lanes.lanes,
                    lanes_done=lanes.done,
                    lanes_running=lanes.running,
                    queue_position=figures[run.id].position,
                    eta_seconds=figures[run.id].eta_sec,
                    visible=self._may_see(request, viewer),
                )
            )
        return found
