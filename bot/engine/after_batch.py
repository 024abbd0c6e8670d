"""Once a run has closed, CSB's after-batch scripts over its lane folders, and what they found in its thread.

The harness runs them once all lanes of a batch have ended; a run is the bot's batch. They run in the
background (a worker thread), after the closing transaction, so the tick never waits for them; a bot
stopped meanwhile simply does not post the findings.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from pathlib import Path

from bot.csb.after_batch_scripts import LaneFolder, run_after_batch
from bot.csb.child_env import ChildEnv
from bot.domain.clock import Clock
from bot.domain.redact import Redactor
from bot.store import outbox, requests, runs
from bot.store.db import Store

log = logging.getLogger(__name__)


class AfterBatchRunner:
    def __init__(self, store: Store, repo: Path, env: ChildEnv, clock: Clock, redact: Redactor) -> None:
        self._store = store
        self._repo = repo
        self._env = env
        self._clock = clock
        self._redact = redact  # the scripts' output may quote a secret; the thread must not
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, run_ids: Iterable[int]) -> None:
        for run_id in run_ids:
            task = asyncio.create_task(self._run(run_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        """Until every started after-batch has posted (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _run(self, run_id: int) -> None:
        try:
            async with self._store.read() as session:
                lanes = await runs.run_lanes(session, run_id)
                run = await runs.get_run(session, run_id)
                request = await requests.get_request(session, run.request_id) if run else None
            if request is None:
                return
            task_file = request.spec.task_file
            folders = sorted(
                {LaneFolder(lane.suite, lane.config, lane.jobs_dir) for lane in lanes if lane.attempt},
                key=lambda folder: (folder.suite, folder.config),
            )
            report = await asyncio.to_thread(run_after_batch, self._repo, folders, task_file, self._env)
            event = report.event(self._redact)
            if event is None:
                return
            async with self._store.write() as session:
                now = self._clock.now()
                await outbox.tell_run(session, run_id, what="after_batch", event=event, now=now)
        except Exception:
            log.exception("run %s: CSB's after-batch scripts could not be run", run_id)
