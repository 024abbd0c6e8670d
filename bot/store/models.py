"""The tables. The database is the bus: listeners and the engine write here, the notifier reads."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Column, UniqueConstraint
from sqlmodel import Field, SQLModel

from bot.domain.outcome import LaneStatus
from bot.store.types import UTCDateTime


def _time(nullable: bool = False) -> Column[datetime]:
    return Column(UTCDateTime(), nullable=nullable)


class RequestState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


class RunState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"


class OutboxKind(StrEnum):
    CARD = "card"  # the approval card: posted once, then edited in place
    STATUS = "status"  # the run's live status message in the card's thread
    SUMMARY = "summary"  # the final per-task summary reply
    EPHEMERAL = "ephemeral"  # a reply only the requester sees, sent to the slash command's response_url


class OutboxState(StrEnum):
    PENDING = "pending"
    SENT = "sent"
    DEAD = "dead"  # Slack refused it for good (e.g. not_in_channel); the reason is in `error`


class RunRequest(SQLModel, table=True):
    __tablename__ = "run_requests"

    id: int | None = Field(default=None, primary_key=True)
    state: RequestState = Field(default=RequestState.PENDING, index=True)
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


class Run(SQLModel, table=True):
    __tablename__ = "runs"

    id: int | None = Field(default=None, primary_key=True)
    request_id: int = Field(foreign_key="run_requests.id", unique=True)
    state: RunState = Field(default=RunState.QUEUED, index=True)
    run_dir: str
    model: str
    parallel: int
    status_ts: str | None = None
    created_at: datetime = Field(sa_column=_time())
    started_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))


class Lane(SQLModel, table=True):
    __tablename__ = "lanes"
    __table_args__ = (UniqueConstraint("run_id", "task_id", "role"),)

    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="runs.id", index=True)
    pair_index: int  # the task's position in the spec; both lanes of a pair share it
    task_id: str
    suite: str
    task_path: str
    role: str
    config: str
    mcp_type: str
    state: LaneStatus = Field(default=LaneStatus.QUEUED, index=True)
    timeout_sec: int
    jobs_dir: str
    log_path: str
    pid: int | None = None
    exit_code: int | None = None
    reward: float | None = None
    exception_type: str | None = None
    reason: str | None = None
    started_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))


class OutboxItem(SQLModel, table=True):
    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    # The message this row renders, e.g. "card:12". It is the idempotency key carried in the message's
    # metadata, so a post whose answer was lost can be found instead of posted twice.
    target: str = Field(index=True)
    kind: OutboxKind
    state: OutboxState = Field(default=OutboxState.PENDING, index=True)
    request_id: int | None = Field(default=None, foreign_key="run_requests.id")
    run_id: int | None = Field(default=None, foreign_key="runs.id")
    text: str | None = None  # only for EPHEMERAL rows; the other kinds render from the tables
    response_url: str | None = None  # only for EPHEMERAL rows answering a command or a click
    attempts: int = 0
    next_attempt_at: datetime = Field(sa_column=_time())
    created_at: datetime = Field(sa_column=_time())
    sent_at: datetime | None = Field(default=None, sa_column=_time(nullable=True))
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
    reason: str | None = None
