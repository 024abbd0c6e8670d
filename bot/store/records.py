"""What the store hands out: frozen records of its rows, each with its id, read once from the table.

The tables (`bot/store/models.py`) stay inside the store. A row read by SQLModel has `id: int | None`
and can be changed and flushed by whoever holds it; a record cannot, and its id is an `int`, so code
outside the store needs neither `assert x.id is not None` nor `x.id or 0`. A request's spec is parsed
into `RunSpec` here, once, rather than by each reader. Rows to be created go in as `New…` records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Self

from bot.domain.outcome import LaneStatus
from bot.domain.promotion_flow import PromotionState
from bot.domain.run_summary import Headline, LaneTally, RunFigures
from bot.domain.spec import RunSpec
from bot.domain.states import RequestState, RunState

if TYPE_CHECKING:
    from bot.store import models


class OutboxKind(StrEnum):
    CARD = "card"  # the approval card: posted once, then edited in place
    STATUS = "status"  # the run's live status message in the card's thread
    SUMMARY = "summary"  # the final per-task summary reply
    EPHEMERAL = "ephemeral"  # a reply only the requester sees, sent to the slash command's response_url
    NOTICE = "notice"  # a plain text reply in the card's thread (reminders, milestones)
    DM = "dm"  # a direct message to the requester (the run finished)
    CARD_COPY = "card_copy"  # the current card, shown only to one person (`/csb status <run>`)
    HOME = "home"  # republish App Home tabs (target `home:<user>` or `home:*` for every viewer)
    PROMOTION = "promotion"  # a promotion's card: posted once, then edited in place
    # `Fill gaps` / `Plan variance` under a `/csb coverage` answer, to its response_url; `text` holds the
    # buttons' values (the `/csb coverage` words each click repeats), one a line.
    COVERAGE = "coverage"


class OutboxState(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    # Set aside: Slack refused it for a reason no retry fixes (e.g. not_in_channel, invalid_blocks), or it
    # could not be rendered. The reason is in `error`; delivery goes on with the other rows.
    DEAD = "dead"


_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _names(record: type[Any]) -> tuple[str, ...]:
    names = _NAMES.get(record)
    if names is None:
        names = _NAMES[record] = tuple(field.name for field in fields(record))
    return names


def _values(record: type[Any], row: object, *computed: str) -> dict[str, Any]:
    """The row's columns the record keeps, by name; `computed` ones the record's `from_row` fills."""
    return {name: getattr(row, name) for name in _names(record) if name not in computed}


def stored_id(row: object) -> int:
    """A row read from the database has its id; one without was never stored, a bug said here."""
    row_id = getattr(row, "id", None)
    if row_id is None:
        raise ValueError(f"a {type(row).__name__} row has no id: it was never stored")
    return int(row_id)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A slash command's request for a run, at its current revision; `spec` already parsed."""

    id: int
    state: RequestState
    spec: RunSpec
    spec_hash: str
    requester: str
    channel_id: str
    response_url: str | None
    card_ts: str | None
    decided_by: str | None
    decided_at: datetime | None
    reason: str | None
    created_at: datetime
    revision: int
    category: str
    checks_json: str  # the services' `RequestChecks`, which the store does not know
    change_note: str | None
    expires_at: datetime | None
    reminded_at: datetime | None
    rerun_of: int | None
    trigger_id: str | None
    budget_override_by: str | None = None  # who approved it past its monthly budget's block line

    @classmethod
    def from_row(cls, row: models.RunRequest, spec: RunSpec | None = None) -> Self:
        """`spec`: the row's spec when the caller holds it already (it just wrote it), not parsed again."""
        parsed = spec if spec is not None else RunSpec.model_validate_json(row.spec_json)
        return cls(id=stored_id(row), spec=parsed, **_values(cls, row, "id", "spec"))


@dataclass(frozen=True, slots=True)
class PendingWait:
    """A pending request as the reminder timer weighs it: when it was made and last reminded, no spec."""

    id: int
    category: str
    created_at: datetime
    reminded_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewRequest:
    """A request to be created pending (`store.requests.create_request`)."""

    spec: RunSpec
    requester: str
    channel_id: str
    response_url: str | None
    created_at: datetime
    category: str
    checks_json: str
    expires_at: datetime | None
    trigger_id: str | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """A run, as its row was when read; its id is its request's (`store.runs.run_id_of`)."""

    id: int
    request_id: int
    state: RunState
    run_dir: str
    model: str
    parallel: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    stopped_by: str | None
    stop_reason: str | None
    stop_requested_at: datetime | None
    attempts_done: int
    infra_failures: int
    infra_failures_total: int
    paused_reason: str | None

    @classmethod
    def from_row(cls, row: models.Run) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A closed run's figures (`store.summaries`), with the request's fields its answers filter on."""

    run_id: int
    state: RunState
    finished_at: datetime | None
    requester: str
    channel_id: str
    category: str
    model: str
    suite_label: str
    suite: str | None
    suites: tuple[str, ...]
    figures: RunFigures

    @classmethod
    def from_row(cls, row: models.RunSummary) -> Self:
        outcomes = json.loads(row.outcomes_json)
        figures = RunFigures(
            pairs_done=row.pairs_done,
            pairs_total=row.pairs_total,
            baseline=Headline(row.baseline_passed, row.baseline_valid, row.baseline_mean_reward),
            mcp=Headline(row.mcp_passed, row.mcp_valid, row.mcp_mean_reward),
            baseline_lanes=LaneTally(row.baseline_lanes_passed, row.baseline_lanes),
            mcp_lanes=LaneTally(row.mcp_lanes_passed, row.mcp_lanes),
            outcomes=tuple((state, outcomes[state.value]) for state in LaneStatus if state.value in outcomes),
            cost_usd=row.cost_usd,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
        )
        return cls(
            run_id=row.run_id,
            state=row.state,
            finished_at=row.finished_at,
            requester=row.requester,
            channel_id=row.channel_id,
            category=row.category,
            model=row.model,
            suite_label=row.suite_label,
            suite=row.suite,
            suites=tuple(json.loads(row.suites_json)),
            figures=figures,
        )


@dataclass(frozen=True, slots=True)
class FinishedFolder:
    """A finished run as `/csb coverage --staging` chooses it: who may see it, its model, and its folder."""

    run_id: int
    category: str
    requester: str
    channel_id: str
    model: str
    suites: tuple[str, ...]
    run_dir: str


@dataclass(frozen=True, slots=True)
class LaneCounts:
    """What `/csb status` shows of a run's lanes: how many, how many ended and running, and their suites."""

    lanes: int
    done: int
    running: int
    suites: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run to be created queued (`store.runs.create_run`); its id will be its request's."""

    request_id: int
    run_dir: str
    model: str
    parallel: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Lane:
    """One lane attempt's row, as it was when read."""

    id: int
    run_id: int
    pair_index: int
    task_id: str
    suite: str
    task_path: str
    role: str
    config: str
    mcp_type: str
    state: LaneStatus
    timeout_sec: int
    jobs_dir: str
    log_path: str
    pid: int | None
    exit_code: int | None
    reward: float | None
    exception_type: str | None
    reason: str | None
    reason_kind: str | None
    log_line: str | None
    started_at: datetime | None
    finished_at: datetime | None
    attempt: int
    infra_failures: int
    not_before: datetime | None
    account: str | None
    host: str | None
    marker: str | None
    stop_kind: str | None
    stop_sent_at: datetime | None
    killed_at: datetime | None
    stop_wanted: str | None
    stall_noted: int | None
    long_noted: int | None
    manifest_status: str | None
    status_tool: str | None
    fingerprint: str | None
    mcp_calls: int | None
    contaminated: bool | None
    input_tokens: int | None
    output_tokens: int | None
    cache_write_tokens: int | None
    cache_read_tokens: int | None
    cost_usd: float | None
    verdict_json: str | None

    @classmethod
    def from_row(cls, row: models.Lane) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))


@dataclass(frozen=True, slots=True)
class NewLane:
    """A lane to be created queued with its run (`store.runs.create_run`)."""

    pair_index: int
    task_id: str
    suite: str
    task_path: str
    role: str
    config: str
    mcp_type: str
    timeout_sec: int
    jobs_dir: str
    log_path: str


@dataclass(frozen=True, slots=True)
class Account:
    """A Claude account home lanes run under."""

    home: str
    turn: int
    rested_until: datetime | None
    rest_reason: str | None
    drained_at: datetime | None
    drained_by: str | None

    @classmethod
    def from_row(cls, row: models.Account) -> Self:
        return cls(**_values(cls, row))


@dataclass(frozen=True, slots=True)
class AccountEvent:
    """One line of an account's audit trail."""

    id: int
    home: str
    action: str
    actor: str
    at: datetime
    detail: str | None

    @classmethod
    def from_row(cls, row: models.AccountEvent) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))


@dataclass(frozen=True, slots=True)
class OrphanProcess:
    """A marked process no running lane owns (see `store.orphans`)."""

    marker: str
    host: str
    pid: int
    job: str | None
    seen_at: datetime

    @classmethod
    def from_row(cls, row: models.OrphanProcess) -> Self:
        return cls(**_values(cls, row))


@dataclass(frozen=True, slots=True)
class Lease:
    """Who holds a duty, until when."""

    name: str
    holder: str
    host: str
    pid: int
    expires_at: datetime
    renewed_at: datetime
    slots: int

    @classmethod
    def from_row(cls, row: models.Lease) -> Self:
        return cls(**_values(cls, row))


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """A message to deliver, as its outbox row was when read."""

    id: int
    target: str
    kind: OutboxKind
    state: OutboxState
    request_id: int | None
    run_id: int | None
    text: str | None
    response_url: str | None
    user_id: str | None
    attempts: int
    generation: int
    next_attempt_at: datetime
    created_at: datetime
    sent_at: datetime | None
    post_attempted_at: datetime | None
    error: str | None

    @classmethod
    def from_row(cls, row: models.OutboxItem) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One state change of a request or its run."""

    id: int
    request_id: int
    run_id: int | None
    action: str
    actor: str
    at: datetime
    spec_hash: str
    revision: int
    reason: str | None

    @classmethod
    def from_row(cls, row: models.AuditEvent) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))


@dataclass(frozen=True, slots=True)
class Promotion:
    """One promotion as its row was when read."""

    id: int
    run_id: int
    state: PromotionState
    requester: str
    channel_id: str
    card_ts: str | None
    force: bool
    quarantine: bool
    digest: str
    preview_json: str
    plan_json: str
    approvers_json: str
    step: str | None
    phase: str | None
    journal_json: str
    error: str | None
    decided_by: str | None
    after_restart: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: models.Promotion) -> Self:
        return cls(id=stored_id(row), **_values(cls, row, "id"))
