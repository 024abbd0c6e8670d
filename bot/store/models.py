"""The tables. The database is the bus: listeners and the engine write here, the notifier reads."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, LargeBinary, UniqueConstraint, text
from sqlmodel import Field, SQLModel

from bot.domain.outcome import LaneStatus
from bot.domain.promotion_flow import PromotionState
from bot.domain.states import RequestState, RunState  # the states and their moves: bot/domain/states.py
from bot.store.records import OutboxKind, OutboxState  # the records' enums, kept in their columns
from bot.store.types import UTCDateTime, enum_type


def _time(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


# The predicate of the outbox's partial unique index, as a literal: ON CONFLICT must repeat it exactly.
ONE_PENDING_WHERE = "state = 'pending'"


class RunRequest(SQLModel, table=True):
    __tablename__ = "run_requests"
    # One request per slash command, however often Slack delivers it and to whichever bot process.
    __table_args__ = (Index("uq_run_requests_trigger", "trigger_id", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    state: RequestState = Field(default=RequestState.PENDING, index=True, sa_type=enum_type(RequestState))
    spec_json: str
    spec_hash: str
    requester: str
    channel_id: str
    response_url: str | None = None
    card_ts: str | None = None
    decided_by: str | None = None
    decided_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    reason: str | None = None
    created_at: datetime = Field(sa_column=_time())
    # The approval gate. Each Edit makes a new revision; approvals count only for the current one.
    revision: int = 1
    category: str = "staging"
    checks_json: str = "{}"  # RequestChecks: preflight findings and pairing guard, shown on the card
    change_note: str | None = None  # what the last Edit changed, shown on the card
    expires_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    reminded_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    rerun_of: int | None = None  # the run whose failed tasks this request reruns
    trigger_id: str | None = None  # the slash command's own id, from Slack: unique to that invocation
    # Who approved it past the monthly budget's block line: its run is not drained for the budget.
    budget_override_by: str | None = None


class Approval(SQLModel, table=True):
    """One person's approval of one revision; the unique key makes a double click count once."""

    __tablename__ = "approvals"
    __table_args__ = (UniqueConstraint("request_id", "revision", "user_id"),)

    id: int | None = Field(default=None, primary_key=True)
    request_id: int = Field(foreign_key="run_requests.id", index=True)
    revision: int
    user_id: str
    at: datetime = Field(sa_column=_time())


class Run(SQLModel, table=True):
    __tablename__ = "runs"

    id: int | None = Field(default=None, primary_key=True)
    request_id: int = Field(foreign_key="run_requests.id", unique=True)
    state: RunState = Field(default=RunState.QUEUED, index=True, sa_type=enum_type(RunState))
    run_dir: str
    model: str
    parallel: int
    created_at: datetime = Field(sa_column=_time())
    started_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    # Cancel and drain: who asked, why and when; the state says how far the stop has got.
    stopped_by: str | None = None
    stop_reason: str | None = None
    stop_requested_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    # Lane attempts ended since the run started (or was last resumed), and how many of them failed on
    # infrastructure: their ratio pauses the run.
    attempts_done: int = 0
    infra_failures: int = 0
    infra_failures_total: int = 0  # never reset: the thread's retry-storm notes count these
    paused_reason: str | None = None


class Lane(SQLModel, table=True):
    __tablename__ = "lanes"
    __table_args__ = (
        UniqueConstraint("run_id", "task_id", "role"),
        # The estimate's history (`bot/store/estimates.py`): newest finished lanes of a group and model
        # first, with the columns the query reads, so it never visits the table.
        Index(
            "ix_lanes_history", "suite", "config", "model", "finished_at", "state", "cost_usd", "started_at"
        ),
        Index("ix_lanes_suite_finished", "suite", "finished_at", "state", "cost_usd", "started_at"),
        # A month's spend (`bot/store/spend.py`): the lanes that finished in it, with what it sums.
        Index("ix_lanes_finished", "finished_at", "run_id", "state", "cost_usd"),
        # The ETA's fallback to the model's recent lanes (`bot/store/queue.py`), read from its newest end.
        Index("ix_lanes_model_finished", "model", "finished_at", "state", "started_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="runs.id", index=True)
    pair_index: int  # the task's position in the spec; both lanes of a pair share it
    task_id: str
    suite: str
    task_path: str
    role: str
    config: str
    mcp_type: str
    model: str | None = None  # its run's, kept here so the estimate reads its history from one index
    state: LaneStatus = Field(default=LaneStatus.QUEUED, index=True, sa_type=enum_type(LaneStatus))
    timeout_sec: int
    jobs_dir: str
    log_path: str
    pid: int | None = None
    exit_code: int | None = None
    reward: float | None = None
    exception_type: str | None = None
    reason: str | None = None  # the message of the lane's reason; its other parts beside it
    reason_kind: str | None = None  # a `ReasonKind`, when the bot knows how the lane ended
    log_line: str | None = None  # the line of the lane's log that tells why
    started_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    # Scheduling: every start is an attempt; infrastructure failures are retried after `not_before`.
    attempt: int = 0
    infra_failures: int = 0
    not_before: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    account: str | None = None  # the HOME this attempt runs with
    host: str | None = None  # where this attempt's process runs
    # Carried in the process's environment (CSB_BOT_LANE), so a restarted bot finds the process even
    # when it was killed between spawning it and recording its pid.
    marker: str | None = None
    stop_kind: str | None = None  # "timeout", "cancel", "drain" or "stall" once the engine has sent SIGINT
    # A stop someone asked for, carried out by the engine's next look: "drain" (its account was drained
    # with --stop) or "stall" (Stop and retry); either ends the attempt as an infrastructure failure.
    stop_wanted: str | None = None
    stall_noted: int | None = None  # the attempt whose stall was told in the thread (once per attempt)
    long_noted: int | None = None  # the attempt named on the card as past its share of the time limit
    stop_sent_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    killed_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    # CSB's verdicts on the trial, stored when the lane ends (None: no trial, or ended before they were kept).
    manifest_status: str | None = None
    status_tool: str | None = None
    fingerprint: str | None = None
    mcp_calls: int | None = None  # None: unknown (no transcript, trajectory or task_metrics), not zero
    contaminated: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None
    cost_usd: float | None = None
    verdict_json: str | None = None  # the whole `LaneVerdict`: flags, advice, what could not be read


class RunSummary(SQLModel, table=True):
    """A finished or cancelled run's figures, written in the transaction that closes it (a closed run never
    changes again): what `/csb runs` and App Home show of it, read as one row instead of its lanes. The
    request's fields the answers filter on are copied here, so they read no spec either."""

    __tablename__ = "run_summaries"
    __table_args__ = (
        # `/csb runs` and `/csb coverage`: the newest finished runs; App Home: the latest official ones,
        # and someone's own runs.
        Index("ix_run_summaries_finished", "state", "finished_at", "run_id"),
        Index("ix_run_summaries_category", "category", "state", "finished_at"),
        Index("ix_run_summaries_requester", "requester", "run_id"),
    )

    run_id: int = Field(foreign_key="runs.id", primary_key=True)
    state: RunState = Field(sa_type=enum_type(RunState))
    finished_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    requester: str
    channel_id: str
    category: str
    model: str
    suite_label: str
    suite: str | None = None  # the suite chosen, if one was
    suites_json: str = "[]"  # every suite of its tasks
    pairs_done: int
    pairs_total: int
    # Valid results per role (CSB's curation rules), as `/csb runs` shows them.
    baseline_passed: int
    baseline_valid: int
    baseline_mean_reward: float | None = None
    mcp_passed: int
    mcp_valid: int
    mcp_mean_reward: float | None = None
    # Lanes per role and how many passed, as App Home shows the latest official runs.
    baseline_lanes: int
    baseline_lanes_passed: int
    mcp_lanes: int
    mcp_lanes_passed: int
    outcomes_json: str = "{}"  # lanes by state
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    # `/csb coverage --staging`: the run's folder, and its lanes CSB's rules keep as valid runs, as JSON
    # [[suite, config, MANIFEST task key], …] (read by coverage alone; the other answers leave it unread).
    run_dir: str = ""
    valid_json: str = "[]"
    # The same lanes as `lane_keys` ids (`bot/store/lane_keys.py`: little-endian int32s), counted without
    # decoding; None where an older csb-bot wrote the summary (then `valid_json` is read).
    valid_keys: bytes | None = Field(default=None, sa_type=LargeBinary)


class LaneKey(SQLModel, table=True):
    """Each (suite, config, MANIFEST task key) a valid lane was ever counted under, once, by number: a
    year of summaries repeats a few thousand of them some 500,000 times."""

    __tablename__ = "lane_keys"
    __table_args__ = (Index("uq_lane_keys_key", "suite", "config", "task", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    suite: str
    config: str
    task: str


class Account(SQLModel, table=True):
    """A Claude account home lanes run under; rested after a rate limit, taken in turn."""

    __tablename__ = "accounts"

    home: str = Field(primary_key=True)
    turn: int = 0  # round robin: the lowest turn goes next
    rested_until: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    rest_reason: str | None = None
    # `/csb drain-account`: no new lane starts here while set (every replica reads it at each claim).
    drained_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    drained_by: str | None = None


class AccountEvent(SQLModel, table=True):
    """Append-only: who drained or undrained an account, when (an account belongs to no request)."""

    __tablename__ = "account_events"

    id: int | None = Field(default=None, primary_key=True)
    home: str = Field(index=True)
    action: str
    actor: str
    at: datetime = Field(sa_column=_time())
    detail: str | None = None


class OrphanProcess(SQLModel, table=True):
    """A process carrying a lane marker that belongs to no running lane, as the engine last found it on
    its host (replaced at each look); shown to admins in App Home."""

    __tablename__ = "orphan_processes"

    marker: str = Field(primary_key=True)
    host: str = Field(index=True)
    pid: int
    job: str | None = None  # the lane attempt's `--job-name`, read from its command line
    seen_at: datetime = Field(sa_column=_time())


class Lease(SQLModel, table=True):
    """Who runs the timers: one row per duty, renewed by its holder's heartbeat, taken over when expired."""

    __tablename__ = "leases"

    name: str = Field(primary_key=True)
    holder: str
    host: str
    pid: int
    expires_at: datetime = Field(sa_column=_time())
    renewed_at: datetime = Field(sa_column=_time())
    slots: int = 0  # the holder's global slot pool, for queue ETAs


class OutboxItem(SQLModel, table=True):
    __tablename__ = "outbox"
    # One pending row per message: writers in two processes meet here (`INSERT … ON CONFLICT`).
    __table_args__ = (
        Index(
            "uq_outbox_pending_target",
            "target",
            unique=True,
            sqlite_where=text(ONE_PENDING_WHERE),
            postgresql_where=text(ONE_PENDING_WHERE),
        ),
    )

    id: int | None = Field(default=None, primary_key=True)
    # The message this row renders, e.g. "card:12". It is the idempotency key carried in the message's
    # metadata, so a post whose answer was lost can be found instead of posted twice.
    target: str = Field(index=True)
    kind: OutboxKind = Field(sa_type=enum_type(OutboxKind))
    state: OutboxState = Field(default=OutboxState.PENDING, index=True, sa_type=enum_type(OutboxState))
    request_id: int | None = Field(default=None, foreign_key="run_requests.id")
    run_id: int | None = Field(default=None, foreign_key="runs.id")
    text: str | None = None  # EPHEMERAL rows' text, COVERAGE rows' button values; others render from tables
    response_url: str | None = None  # EPHEMERAL (and COVERAGE) rows answering a command or a click
    user_id: str | None = (
        None  # EPHEMERAL rows without a response_url: chat.postEphemeral in the card's channel
    )
    attempts: int = 0
    # Bumped when the message is asked for again while this row is pending: a send that began
    # before the bump rendered older state, so marking it sent must not retire the row.
    generation: int = 0
    next_attempt_at: datetime = Field(sa_column=_time())
    created_at: datetime = Field(sa_column=_time())
    sent_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    # Written before each chat.postMessage: from then on Slack may hold the message even if its answer
    # (or the sent mark) was lost, so every later attempt looks for it by `target` before posting.
    post_attempted_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    error: str | None = None


class AuditEvent(SQLModel, table=True):
    """Append-only: one row per state change, never updated."""

    __tablename__ = "audit_events"

    id: int | None = Field(default=None, primary_key=True)
    request_id: int = Field(foreign_key="run_requests.id", index=True)
    run_id: int | None = None
    action: str
    actor: str
    at: datetime = Field(sa_column=_time())
    spec_hash: str
    revision: int = 1
    reason: str | None = None


class HomeViewer(SQLModel, table=True):
    """Someone who opened the App Home tab; their tab is republished when requests or runs change."""

    __tablename__ = "home_viewers"

    user_id: str = Field(primary_key=True)
    opened_at: datetime = Field(sa_column=_time())


class SeenInteraction(SQLModel, table=True):
    """A signed click already handled. Slack's signature stays valid for five minutes, so a replayed
    body is recognised by who clicked which element when (`action_ts`), in every bot process."""

    __tablename__ = "seen_interactions"

    key: str = Field(primary_key=True)  # "<user>:<action_id>:<action_ts>"
    seen_at: datetime = Field(sa_column=_time())


class PaceBudget(SQLModel, table=True):
    """One Slack rate budget shared by every bot process (`bot/store/pacing.py`): its recent sends, as
    JSON, changed only under this row's lock."""

    __tablename__ = "pace_budgets"

    name: str = Field(primary_key=True)  # the Web API method paced, e.g. "chat.update"
    state: str = "{}"  # {"last": {target: time}, "recent": [time, …]}, ISO 8601 in UTC


class Promotion(SQLModel, table=True):
    """One `/csb promote <run>`: what its card showed (the preview, bound by `digest`), who approved it,
    and the journal of its steps, written before and after each, so a restart knows where it stopped."""

    __tablename__ = "promotions"

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="runs.id", index=True)
    state: PromotionState = Field(
        default=PromotionState.PENDING, index=True, sa_type=enum_type(PromotionState)
    )
    requester: str
    channel_id: str
    card_ts: str | None = None
    force: bool = False
    quarantine: bool = False
    digest: str  # of the run's files and the MANIFEST when the card was drawn
    preview_json: str  # PromotionPreview: the gates, the MANIFEST diff and the destinations shown
    plan_json: str = "[]"  # the file steps' paths per folder, fixed at approval
    approvers_json: str = "[]"
    step: str | None = None  # the step under way or last done
    phase: str | None = None
    journal_json: str = "[]"
    error: str | None = None
    decided_by: str | None = None
    after_restart: bool = False
    created_at: datetime = Field(sa_column=_time())
    updated_at: datetime = Field(sa_column=_time())


class PromotionLock(SQLModel, table=True):
    """Held while a promotion touches `runs/official`: taken by inserting the row (its key is the
    scope), so of two replicas inserting at once one gets it, and given back by deleting it."""

    __tablename__ = "promotion_locks"

    scope: str = Field(primary_key=True)  # "runs/official"
    promotion_id: int
    taken_at: datetime = Field(sa_column=_time())
