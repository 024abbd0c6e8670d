"""Approved promotions executed step by step, one at a time, and those a dead bot left settled.

Only the lease holder runs them (from its tick), so a promotion has one executor; the lock row on
`runs/official` (`store.promotions.claim`) still serialises them across replicas. Each step is journalled
in the promotion's row as started before it runs and as done (or failed) after, with an audit row and a
card redraw; the file work runs in a thread. A failed step, or a promotion found EXECUTING when the lease
is taken (its bot died), is settled from the tree alone (`execute.settle_all`): finished when the move
happened, undone before it. The engine says what happened as events; the views write the words.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from threading import Event

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.child_env import ChildEnv
from bot.csb.promotion import digest, execute
from bot.csb.promotion.steps import Plan, Settled
from bot.domain.clock import Clock
from bot.domain.events import PromotionEnded
from bot.domain.mrkdwn import clip
from bot.domain.promotion import PromotionPreview
from bot.domain.promotion_flow import JournalEntry, Phase, PromotionState, Step
from bot.domain.redact import Redactor
from bot.engine.promotion_fence import PromotionFence
from bot.store import audit, outbox, promotions, runs
from bot.store.db import Store
from bot.store.records import Promotion

log = logging.getLogger(__name__)

# Test-only: `<step>:before` or `<step>:after` makes the runner stop there for good (the journal shows
# the step started; `after`: its work is done), so a test can SIGKILL the bot at that point. Read once,
# by `bot.wiring`; unset in every real deployment.
HOLD_ENV = "CSB_TEST_PROMOTION_HOLD"
_SHOWN = 400
_HOLD_POLL_SEC = 0.1
_SETTLED = {
    Settled.FINISHED: PromotionState.PROMOTED,
    Settled.UNDONE: PromotionState.UNDONE,
    Settled.LOST: PromotionState.LOST,
}


class PromotionRunner:
    def __init__(
        self,
        store: Store,
        repo: Path,
        env: ChildEnv,
        clock: Clock,
        redact: Redactor,
        fence: PromotionFence,
        hold: str | None = None,
    ) -> None:
        self._store = store
        self._fence = fence
        self._repo = repo
        self._env = env
        self._clock = clock
        self._redact = redact
        self._hold = hold
        self._running: dict[int, asyncio.Task[None]] = {}

    async def start_approved(self) -> None:
        """Claim the oldest approved promotion when `runs/official` is free, and run it in the background."""
        async with self._store.read() as session:
            approved = await promotions.in_state(session, PromotionState.APPROVED)
        for promotion in approved:
            async with self._store.write() as session:
                if not await promotions.claim(session, promotion.id, self._clock.now()):
                    return  # another promotion holds runs/official: this one waits its turn
            self._running[promotion.id] = asyncio.create_task(self._execute(promotion.id))
            return

    async def wait(self) -> None:
        """Until the promotions under way have ended (tests, shutdown)."""
        while self._running:
            await asyncio.gather(*list(self._running.values()), return_exceptions=True)

    async def settle_interrupted(self) -> None:
        """Each tick of the lease holder: a promotion still EXECUTING that this process does not run was
        cut off (its bot died, or lost the lease and stopped); settle it from the tree and say which way
        it went. One whose step may still be under way in a live process waits for it (`promotion_fence`)."""
        async with self._store.read() as session:
            executing = await promotions.in_state(session, PromotionState.EXECUTING)
        for promotion in executing:
            if promotion.id in self._running or not self._fence.abandoned(promotion, self._clock.now()):
                continue
            plans = execute.plans_from_json(promotion.plan_json)
            settled = await self._settle(promotion, plans, failed=None)
            step = promotion.step if promotion.phase in (Phase.STARTED.value, Phase.FAILED.value) else None
            await self._end(
                promotion, _SETTLED[settled], step=step, error=_cut_off(promotion), after_restart=True
            )

    async def _settle(self, promotion: Promotion, plans: list[Plan], failed: Step | None) -> Settled:
        """The tree made consistent; when that finished the promotion (the MANIFEST written again from
        the folders), the official results are exported again over it, unless the export was what failed."""
        settled = await asyncio.to_thread(execute.settle_all, plans, self._clock.now())
        if settled is Settled.FINISHED and failed is not Step.EXPORT:
            started = JournalEntry(step=Step.EXPORT, phase=Phase.STARTED, runner=self._fence.runner)
            if not await self._journal(promotion, started, fenced=True):
                return settled  # the lease is gone: the new holder settles (and exports) it
            try:
                done = await asyncio.to_thread(execute.export, self._repo, self._env)
            except execute.StepFailed as exc:
                note = clip(self._redact(f"after settling: {exc}"), _SHOWN)
                await self._journal(promotion, JournalEntry(step=Step.EXPORT, phase=Phase.FAILED, note=note))
                return settled
            await self._journal(promotion, self._entry(Step.EXPORT, done, prefix="after settling: "))
        return settled

    def _entry(self, step: Step, result: str | execute.Skipped, prefix: str = "") -> JournalEntry:
        if isinstance(result, execute.Skipped):
            return JournalEntry(step=step, phase=Phase.SKIPPED, note=clip(prefix + result.why, _SHOWN))
        return JournalEntry(step=step, phase=Phase.DONE, note=clip(self._redact(prefix + result), _SHOWN))

    async def _execute(self, promotion_id: int) -> None:
        try:
            await self._steps(promotion_id)
        except Exception:
            log.exception("promotion %s: the runner failed", promotion_id)
        finally:
            self._running.pop(promotion_id, None)

    async def _steps(self, promotion_id: int) -> None:
        async with self._store.read() as session:
            promotion = await promotions.get(session, promotion_id)
        assert promotion is not None
        preview = PromotionPreview.model_validate_json(promotion.preview_json)
        now = self._clock.now()
        reviewers = promotions.approvers(promotion)
        plans = execute.plan_promotion(
            self._repo,
            preview,
            quarantine=promotion.quarantine,
            reviewers=reviewers,
            now=now,
            force=promotion.force,
        )
        async with self._store.write() as session:
            await promotions.set_plan(session, promotion_id, execute.plans_json(plans))
        if await self._voided(promotion, preview):
            return
        differences: list[str] = []
        for step in Step:
            started = JournalEntry(step=step, phase=Phase.STARTED, runner=self._fence.runner)
            if not await self._journal(promotion, started, fenced=True):
                log.warning("promotion %s: not starting %s: the timer lease is gone", promotion_id, step)
                return  # the holder settles it
            stop = Event()
            beat = asyncio.create_task(self._fence.beat(promotion_id, stop))
            try:
                ended = await self._step(promotion, step, plans, preview, stop)
            finally:
                beat.cancel()
            if ended is None:
                return
            differences = ended
        await self._end(promotion, PromotionState.PROMOTED, differences=differences)

    async def _voided(self, promotion: Promotion, preview: PromotionPreview) -> bool:
        """Before the first step, with `runs/official` locked for this promotion: does what its card showed
        still hold (the run's files, and the MANIFEST entries its diff touches, as at the deciding
        approval)? Another promotion executed since may have changed those entries; then this one is void,
        nothing moved, and its card says why. True when it was voided (or the lease went meanwhile)."""
        now_shown = await asyncio.to_thread(digest.preview_digest, self._repo, preview)
        why = digest.drift(promotion.digest, now_shown)
        if why is None:
            return False
        error = clip(self._redact(f"{why} since the card was drawn (checked again as it started)"), _SHOWN)
        log.warning("promotion %s void at execution start: %s", promotion.id, why)
        await self._end(promotion, PromotionState.VOID, error=error)
        return True

    async def _step(
        self, promotion: Promotion, step: Step, plans: list[Plan], preview: PromotionPreview, stop: Event
    ) -> list[str] | None:
        """One step, its heartbeat beating: the MANIFEST's differences, or None when the promotion ended
        (failed and settled) or was released to the lease holder (`stop` was set)."""
        try:
            await self._held(step, "before", stop)
            note, differences = await asyncio.to_thread(self._work, step, plans, preview, stop)
            await self._held(step, "after", stop)
        except (execute.StepFailed, OSError, ValueError) as exc:
            error = clip(self._redact(str(exc)), _SHOWN)
            if stop.is_set():
                await self._release(promotion, step, error)
                return None
            await self._journal(promotion, JournalEntry(step=step, phase=Phase.FAILED, note=error))
            settled = await self._settle(promotion, plans, failed=step)
            if not await self._end(promotion, _SETTLED[settled], step=step.value, error=error):
                await self._release(promotion, step, error)
            return None
        await self._journal(promotion, self._entry(step, note))
        return differences

    async def _release(self, promotion: Promotion, step: Step, error: str) -> None:
        """This process lost the lease: it touches nothing more, and the holder settles the promotion."""
        note = clip(
            f"{error} (stopped: the timer lease passed to another bot process, which settles it)", _SHOWN
        )
        await self._journal(promotion, JournalEntry(step=step, phase=Phase.FAILED, note=note, released=True))

    def _work(
        self, step: Step, plans: list[Plan], preview: PromotionPreview, stop: Event
    ) -> tuple[str | execute.Skipped, list[str]]:
        """One step's blocking work: a note for the card (or why it was skipped), and the MANIFEST's
        differences."""
        work: dict[Step, Callable[[], str | execute.Skipped]] = {
            Step.EXTRACT: lambda: execute.extract(self._repo, plans, self._env, stop),
            Step.QUARANTINE: lambda: execute.quarantine(plans, stop),
            Step.TRIAGE: lambda: execute.triage(plans, stop),
            Step.MOVE: lambda: execute.move(plans, stop),
            Step.MANIFEST: lambda: execute.manifest(self._repo, plans, self._env, self._clock.now(), stop),
            Step.EXPORT: lambda: execute.export(self._repo, self._env, stop),
            Step.VALIDATE: lambda: execute.validate(self._repo, self._env, stop),
        }
        if step is Step.COMPARE:
            found = execute.compare(self._repo, preview.diff)
            note = f"{len(found)} differences from the diff shown" if found else "as the diff shown"
            return note, [clip(self._redact(line), _SHOWN) for line in found]
        return work[step](), []

    async def _held(self, step: Step, when: str, stop: Event) -> None:
        """The test hook: held for good, unless the step is stopped (the lease is gone)."""
        if self._hold != f"{step.value}:{when}":
            return
        log.warning("promotion held at %s (%s is set)", self._hold, HOLD_ENV)
        while not stop.is_set():
            await asyncio.sleep(_HOLD_POLL_SEC)
        raise execute.Stopped("held, then stopped: this bot process no longer holds the timer lease")

    async def _journal(self, promotion: Promotion, entry: JournalEntry, *, fenced: bool = False) -> bool:
        """Write the entry (False: the promotion is no longer executing, or, `fenced`, this process no
        longer holds the lease), with its audit row and a card redraw."""
        now = self._clock.now()
        async with self._store.write() as session:
            if fenced and not await self._fence.holds(session):
                return False
            if not await promotions.journal(session, promotion.id, entry, now):
                return False
            if entry.phase is not Phase.STARTED:  # the row keeps the start; the audit, what came of it
                action = f"promotion {entry.step.value} {entry.phase.value}"
                await self._audit(
                    session, promotion, action, entry.note if entry.phase is Phase.FAILED else None
                )
            await outbox.redraw_promotion(session, promotion.id, promotion.run_id, now)
        return True

    async def _end(
        self,
        promotion: Promotion,
        to: PromotionState,
        *,
        step: str | None = None,
        error: str | None = None,
        differences: list[str] | None = None,
        after_restart: bool = False,
    ) -> bool:
        """End it, if this process still holds the lease (False: it does not, or it had ended)."""
        now = self._clock.now()
        event = PromotionEnded(
            promotion_id=promotion.id,
            run_id=promotion.run_id,
            outcome=to.value,
            step=step,
            error=error,
            differences=tuple(differences or ()),
            after_restart=after_restart,
        )
        async with self._store.write() as session:
            if not await self._fence.holds(session):
                return False
            if not await promotions.end(
                session, promotion.id, to, now, error=error, after_restart=after_restart
            ):
                return False
            reason = error or (f"{len(differences)} MANIFEST differences" if differences else None)
            action = "promotion voided" if to is PromotionState.VOID else f"promotion {to.value}"
            await self._audit(session, promotion, action, reason)
            await outbox.redraw_promotion(session, promotion.id, promotion.run_id, now)
            await outbox.tell_run(
                session, promotion.run_id, what=f"promotion-{promotion.id}", event=event, now=now
            )
        return True

    async def _audit(
        self, session: AsyncSession, promotion: Promotion, action: str, reason: str | None
    ) -> None:
        run = await runs.get_run(session, promotion.run_id)
        if run is not None:
            await audit.record_run(session, run, action, self._clock.now(), reason or None)


def _cut_off(promotion: Promotion) -> str | None:
    """Why a promotion its own runner did not end was settled by another process."""
    if promotion.step is None:
        return None
    if promotion.phase == Phase.FAILED.value:
        failed = next((e for e in promotions.entries(promotion) if e.step.value == promotion.step), None)
        if failed is not None and failed.note:
            return failed.note
    if promotion.phase in (Phase.DONE.value, Phase.SKIPPED.value):
        return f"the bot stopped after step {promotion.step}"
    return f"the bot stopped during step {promotion.step}"
