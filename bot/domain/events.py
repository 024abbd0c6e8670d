"""What happened to a run, as typed records: the engine and the services queue these, never words.

Each event is a frozen model with its `kind`; the outbox row keeps it as JSON (`dump`), and only
`bot/slack/views/` turns it into Slack text (`bot.slack.views.events`, one view per kind). Text that came
from outside (an executor's error, a script's finding, a user's reason) is stored redacted and clipped by
whoever has the redactor; the view escapes it, so no stored field carries a secret or Slack markup.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from bot.domain.words import plural


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExecutorBack(_Event):
    """Lanes start again: the executor answers after an outage."""

    kind: Literal["executor_back"] = "executor_back"


class ExecutorAway(_Event):
    """The run has lanes waiting to start while the executor cannot be reached; `why` redacted, clipped."""

    kind: Literal["executor_away"] = "executor_away"
    why: str


class AccountHeld(_Event):
    """Why one account takes no new lane now: `drained` (by `detail`), `resting` (after a rate limit),
    `expired` (its token), `not_ready` (CSB's account_health.py), `utilisation` (`detail`: the figure)."""

    name: str
    why: str
    detail: str | None = None


class AccountsHeld(_Event):
    """The run has lanes waiting because no account may take one; told once until an account may."""

    kind: Literal["accounts_held"] = "accounts_held"
    accounts: tuple[AccountHeld, ...]


class AccountsFree(_Event):
    """An account may take lanes again after the run was told none could."""

    kind: Literal["accounts_free"] = "accounts_free"


class LaneStalled(_Event):
    """A running lane whose log and trial folder have not changed for `quiet_sec`: its note carries Stop and
    retry (the button's value is the lane id)."""

    kind: Literal["lane_stalled"] = "lane_stalled"
    run_id: int
    lane_id: int
    task_id: str
    role: str
    attempt: int
    account: str | None = None
    quiet_sec: int


class LaneRestarted(_Event):
    """Someone stopped a lane to retry it (Stop and retry, or a drain with --stop)."""

    kind: Literal["lane_restarted"] = "lane_restarted"
    run_id: int
    user: str
    lanes: tuple[str, ...]  # `<task>/<role>`
    account: str | None = None  # set for a drain: the account they leave


class PauseCause(_Event):
    """One of CSB's fingerprints behind a pause: how many lanes, and the catalog's label and advice."""

    id: str
    lanes: int
    label: str | None = None
    advice: str | None = None


class RunPaused(_Event):
    """The run passed its infrastructure failure threshold and was paused; `last` is the commonest reason
    the batch gave (redacted, clipped), so a failure no fingerprint knows is still named."""

    kind: Literal["run_paused"] = "run_paused"
    run_id: int
    failures: int
    attempts: int
    threshold: float
    causes: tuple[PauseCause, ...] = ()
    last: str | None = None

    def reason(self) -> str:
        """Why, in the words the run keeps as its `paused_reason` (the card shows it) and the notice starts
        with: the count, each fingerprint's lanes, the commonest reason last."""
        reason = f"{self.failures} of {plural(self.attempts, 'lane attempt')} failed on infrastructure"
        if self.causes:
            reason += ": " + ", ".join(f"{cause.id} ×{cause.lanes}" for cause in self.causes)
        if self.last:
            reason += f", last: {self.last}"
        return reason


class RunVoided(_Event):
    """A queued run did not start: its approval is void (`note`) because of `drift` (redacted, clipped)."""

    kind: Literal["run_voided"] = "run_voided"
    run_id: int
    note: str
    drift: str
    dropped: int


class RunStopped(_Event):
    """`user` cancelled the run, or drains it (`drain`): queued lanes dropped, running lanes left."""

    kind: Literal["run_stopped"] = "run_stopped"
    run_id: int
    user: str
    reason: str
    drain: bool
    dropped: int
    running: int


class BudgetDrained(_Event):
    """The month's recorded spend of the run's category (`scope` "category") or model ("model") passed
    its budget's block line, so the bot drains the run: queued lanes dropped, running lanes finish."""

    kind: Literal["budget_drained"] = "budget_drained"
    run_id: int
    scope: str
    name: str  # the category or the model
    month: str  # YYYY-MM, UTC
    spent_usd: float
    block_usd: float
    budget_usd: float
    dropped: int
    running: int


class RunResumed(_Event):
    """`user` resumed a paused run."""

    kind: Literal["run_resumed"] = "run_resumed"
    run_id: int
    user: str


class AfterBatchRan(_Event):
    """CSB's after-batch scripts ran: metrics written and failed; findings and problems redacted, clipped."""

    kind: Literal["after_batch"] = "after_batch"
    metrics_written: int
    metrics_failed: int
    findings: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


class NotInChannel(_Event):
    """The request's card could not be posted: the bot is not in its channel (the request is withdrawn)."""

    kind: Literal["not_in_channel"] = "not_in_channel"
    request_id: int


class RequestEdited(_Event):
    """`user` edited the request into `revision`; `change` (clipped) is what changed, as
    `describe_change` says it. Kept as the request's `change_note`, shown on its card."""

    kind: Literal["request_edited"] = "request_edited"
    user: str
    revision: int
    change: str


class StillWaiting(_Event):
    """A pending request's reminder: who may approve it (`anyone` in the channel, or these people and
    user groups, or nobody configured)."""

    kind: Literal["still_waiting"] = "still_waiting"
    request_id: int
    anyone: bool
    users: tuple[str, ...] = ()
    usergroups: tuple[str, ...] = ()


class PromotionEnded(_Event):
    """A promotion of the run ended: `outcome` is its state (promoted, undone, lost, or void: what its
    card showed changed before its first step, `error` saying what), `step` the one that
    failed (None when none did), `error` redacted and clipped; `differences` where the MANIFEST written
    differs from the diff the card showed; `after_restart` when another bot process settled it
    (one started later, or the new lease holder)."""

    kind: Literal["promotion_ended"] = "promotion_ended"
    promotion_id: int
    run_id: int
    outcome: str
    step: str | None = None
    error: str | None = None
    differences: tuple[str, ...] = ()
    after_restart: bool = False


Event = Annotated[
    ExecutorBack
    | ExecutorAway
    | RunPaused
    | RunVoided
    | RunStopped
    | BudgetDrained
    | RunResumed
    | AfterBatchRan
    | NotInChannel
    | RequestEdited
    | StillWaiting
    | PromotionEnded
    | AccountsHeld
    | AccountsFree
    | LaneStalled
    | LaneRestarted,
    Field(discriminator="kind"),
]
EVENT_TYPES: tuple[type[BaseModel], ...] = (
    ExecutorBack,
    ExecutorAway,
    RunPaused,
    RunVoided,
    RunStopped,
    BudgetDrained,
    RunResumed,
    AfterBatchRan,
    NotInChannel,
    RequestEdited,
    StillWaiting,
    PromotionEnded,
    AccountsHeld,
    AccountsFree,
    LaneStalled,
    LaneRestarted,
)

_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
_MARK = '{"kind":'  # every dumped event starts so: the JSON's first key is its kind


def dump(event: Event) -> str:
    """The event as the outbox row keeps it: JSON whose first key is the kind (what `load` looks for)."""
    data = event.model_dump(mode="json")
    return json.dumps({"kind": data.pop("kind"), **data}, separators=(",", ":"), ensure_ascii=False)


def load(stored: str) -> Event | None:
    """The event a row keeps, or None for a row holding plain text (queued by a version before events):
    that text is delivered as it is. A row that looks like an event but is not one raises, so the
    notifier sets it aside with the reason instead of posting JSON to the thread."""
    if not stored.startswith(_MARK):
        return None
    try:
        return _ADAPTER.validate_json(stored)
    except ValidationError as exc:
        raise ValueError(f"outbox event unreadable: {exc.error_count()} error(s)") from exc
