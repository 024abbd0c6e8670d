"""A promotion's life: its states, its steps in order, the journal of each step, and what its card shows.

A promotion is asked for (PENDING: the card shows CSB's dry run), approved (APPROVED: waiting for the one
lock on `runs/official`), executed step by step (EXECUTING: each step journalled as started, then done),
and ends PROMOTED (the run is official), UNDONE (a step failed or the bot died before the move: the tree
is as it was), LOST (the run folder is in neither place: an operator must look), REJECTED or VOID (the
run's files or the MANIFEST entries its diff touches changed after the card was drawn: found at the
deciding approval, or again when it starts executing, before anything is moved).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from bot.domain.promotion import PromotionPreview


class PromotionState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    EXECUTING = "executing"
    PROMOTED = "promoted"
    UNDONE = "undone"
    LOST = "lost"
    REJECTED = "rejected"
    VOID = "void"


OPEN_STATES = frozenset({PromotionState.PENDING, PromotionState.APPROVED, PromotionState.EXECUTING})


class Step(StrEnum):
    """The steps, in the order they run; a step the checkout has no script for is journalled skipped."""

    EXTRACT = "extract_task_metrics"
    QUARANTINE = "quarantine"
    TRIAGE = "triage"
    MOVE = "move"
    MANIFEST = "manifest"
    EXPORT = "export_official_results"  # only once the MANIFEST was written, as promote_run.py
    VALIDATE = "validate_official_integrity"
    COMPARE = "compare"


STEPS: tuple[Step, ...] = tuple(Step)


class Phase(StrEnum):
    STARTED = "started"
    DONE = "done"
    SKIPPED = "skipped"
    FAILED = "failed"


class StepRunner(BaseModel):
    """The bot process that started a step (its lease claimant): a successor settles the promotion at
    once when that process is gone, and otherwise waits for it to stop."""

    model_config = ConfigDict(frozen=True)

    holder: str
    host: str
    pid: int


class JournalEntry(BaseModel):
    """One step's line on the card: its phase and what it did (`note`: a redacted, clipped fact), and
    when it started and ended (set by the store as it writes the entry), so the steps of two promotions
    can be seen never to overlap."""

    model_config = ConfigDict(frozen=True)

    step: Step
    phase: Phase
    note: str = ""
    started_at: datetime | None = None
    ended_at: datetime | None = None  # None while it runs
    runner: StepRunner | None = None
    released: bool = False  # its runner stopped for good (it lost the lease): settle without waiting


class PromotionCardView(BaseModel):
    """What the promotion card shows, read from the row at send time; words are the view's."""

    model_config = ConfigDict(frozen=True)

    promotion_id: int
    run_id: int
    requester: str
    state: PromotionState
    preview: PromotionPreview
    force: bool
    quarantine: bool
    approvers: tuple[str, ...] = ()
    approvals_needed: int = 1
    journal: tuple[JournalEntry, ...] = ()
    error: str | None = None
    decided_by: str | None = None
    after_restart: bool = False  # settled by another process: a restarted bot, or the new lease holder

    @property
    def approvable(self) -> bool:
        """Approve is offered while pending and not blocked (a forced promotion shows its bypass)."""
        return self.state is PromotionState.PENDING and not blocked(self.preview, self.force)


def blocked(preview: PromotionPreview, force: bool) -> bool:
    """Whether the preview forbids the promotion: `--force` bypasses CSB's gates and a collision (the
    folder gets a `__promoted_<stamp>` suffix), never an unreadable MANIFEST or a missing folder."""
    if not force:
        return preview.blocked
    return preview.manifest_problem is not None or any(f.refusal is not None for f in preview.folders)
