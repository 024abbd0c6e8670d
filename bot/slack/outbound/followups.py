"""What delivering one message queues next: the thread's milestones a redrawn card shows were reached,
the App Home republish a changed card calls for, the requester's DM after a report. Rows only; the
notifier's next round delivers them."""

from __future__ import annotations

import logging

from bot.domain import outbox_keys
from bot.domain.clock import Clock
from bot.slack.outbound import render
from bot.slack.outbound.milestones import reached
from bot.slack.views.run_card import RunCardView
from bot.store import homes, outbox, runs
from bot.store.db import Store
from bot.store.records import OutboxKind, RunRequest

log = logging.getLogger(__name__)


class Followups:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def catch_up_milestones(self) -> None:
        """Before a thread reply goes, the milestones its run has reached are queued, each dated when it
        happened, so a report or a pause can never overtake the run's "started"."""
        async with self._store.read() as session:
            threads = await outbox.pending_threads(session, self._clock.now())
        for request_id in threads:
            try:
                async with self._store.read() as session:
                    run = await runs.get_run(session, runs.run_id_of(request_id))
                    card = await render.load_run_card(session, runs.run_id_of(request_id), self._clock.now())
                if run is not None and card is not None:
                    await self.queue_milestones(request_id, card, run.infra_failures_total)
            except Exception:
                log.exception("milestones of run %s could not be brought up to date", request_id)

    async def queue_milestones(self, request_id: int, run: RunCardView, infra_failures: int) -> None:
        """Each milestone dated when it happened. The view may have been read just before the run closed:
        once its report is queued, only the start may still join the thread (the report is its last
        word), and that is decided in the transaction that writes the milestones."""
        now = self._clock.now()
        milestones = reached(run, infra_failures)
        if run.finished_at is not None:
            milestones = [m for m in milestones if outbox_keys.is_start(m.key)]
        async with self._store.write() as session:
            if await outbox.exists(session, outbox_keys.summary(run.run_id)):
                milestones = [m for m in milestones if outbox_keys.is_start(m.key)]
            for milestone in milestones:
                if not await outbox.exists(session, milestone.key):
                    await outbox.enqueue(
                        session,
                        kind=OutboxKind.NOTICE,
                        target=milestone.key,
                        now=min(milestone.at or now, now),
                        request_id=request_id,
                        text=milestone.text,
                    )

    async def queue_home_refresh(self) -> None:
        """A card changed, so someone's home tab may be stale: one coalesced republish for every viewer."""
        async with self._store.write() as session:
            if await homes.viewers(session):
                await outbox.enqueue(
                    session, kind=OutboxKind.HOME, target=outbox_keys.EVERY_VIEWER, now=self._clock.now()
                )

    async def queue_dm(self, request: RunRequest, text: str) -> None:
        """Once per run, ever: a report row sent again (its mark lost in a crash) must not DM twice."""
        target = outbox_keys.finished_dm(request.id)
        async with self._store.write() as session:
            if not await outbox.exists(session, target):
                await outbox.enqueue(
                    session,
                    kind=OutboxKind.DM,
                    target=target,
                    now=self._clock.now(),
                    request_id=request.id,
                    text=text,
                )
