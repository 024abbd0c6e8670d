"""The schema as the bot made it before migrations existed (create_all of its models).

A database written by that version has these tables without an `alembic_version` row: the bot stamps it
with this revision, then upgrades it like any other. On PostgreSQL this is where the types are chosen:
enums are stored by their value in plain VARCHAR columns (no native enum type to alter when a state is
added) and every timestamp is `timestamp with time zone`, written in UTC.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_TEXT = sa.String()
_TIME = sa.DateTime(timezone=True)


def _enum(*values: str) -> sa.Enum:
    """A state column: VARCHAR as long as the longest value, the value itself stored."""
    return sa.Enum(*values, native_enum=False, create_constraint=False)


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("home", _TEXT, nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("rested_until", _TIME, nullable=True),
        sa.Column("rest_reason", _TEXT, nullable=True),
        sa.PrimaryKeyConstraint("home"),
    )
    op.create_table(
        "home_viewers",
        sa.Column("user_id", _TEXT, nullable=False),
        sa.Column("opened_at", _TIME, nullable=False),
        sa.PrimaryKeyConstraint("user_id"),
    )
    op.create_table(
        "leases",
        sa.Column("name", _TEXT, nullable=False),
        sa.Column("holder", _TEXT, nullable=False),
        sa.Column("host", _TEXT, nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("expires_at", _TIME, nullable=False),
        sa.Column("renewed_at", _TIME, nullable=False),
        sa.Column("slots", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "run_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("state", _enum("pending", "approved", "rejected", "expired"), nullable=False),
        sa.Column("spec_json", _TEXT, nullable=False),
        sa.Column("spec_hash", _TEXT, nullable=False),
        sa.Column("requester", _TEXT, nullable=False),
        sa.Column("channel_id", _TEXT, nullable=False),
        sa.Column("response_url", _TEXT, nullable=True),
        sa.Column("card_ts", _TEXT, nullable=True),
        sa.Column("decided_by", _TEXT, nullable=True),
        sa.Column("decided_at", _TIME, nullable=True),
        sa.Column("reason", _TEXT, nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("category", _TEXT, nullable=False),
        sa.Column("checks_json", _TEXT, nullable=False),
        sa.Column("change_note", _TEXT, nullable=True),
        sa.Column("expires_at", _TIME, nullable=True),
        sa.Column("reminded_at", _TIME, nullable=True),
        sa.Column("rerun_of", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_run_requests_state"), "run_requests", ["state"], unique=False)
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("user_id", _TEXT, nullable=False),
        sa.Column("at", _TIME, nullable=False),
        sa.ForeignKeyConstraint(["request_id"], ["run_requests.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("request_id", "revision", "user_id"),
    )
    op.create_index(op.f("ix_approvals_request_id"), "approvals", ["request_id"], unique=False)
    op.create_table(
        "audit_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("action", _TEXT, nullable=False),
        sa.Column("actor", _TEXT, nullable=False),
        sa.Column("at", _TIME, nullable=False),
        sa.Column("spec_hash", _TEXT, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("reason", _TEXT, nullable=True),
        sa.ForeignKeyConstraint(["request_id"], ["run_requests.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_audit_events_request_id"), "audit_events", ["request_id"], unique=False)
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=False),
        sa.Column(
            "state",
            _enum("queued", "running", "paused", "draining", "cancelling", "finished", "cancelled"),
            nullable=False,
        ),
        sa.Column("run_dir", _TEXT, nullable=False),
        sa.Column("model", _TEXT, nullable=False),
        sa.Column("parallel", sa.Integer(), nullable=False),
        sa.Column("status_ts", _TEXT, nullable=True),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("started_at", _TIME, nullable=True),
        sa.Column("finished_at", _TIME, nullable=True),
        sa.Column("stopped_by", _TEXT, nullable=True),
        sa.Column("stop_reason", _TEXT, nullable=True),
        sa.Column("stop_requested_at", _TIME, nullable=True),
        sa.Column("attempts_done", sa.Integer(), nullable=False),
        sa.Column("infra_failures", sa.Integer(), nullable=False),
        sa.Column("infra_failures_total", sa.Integer(), nullable=False),
        sa.Column("paused_reason", _TEXT, nullable=True),
        sa.ForeignKeyConstraint(["request_id"], ["run_requests.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("request_id"),
    )
    op.create_index(op.f("ix_runs_state"), "runs", ["state"], unique=False)
    op.create_table(
        "lanes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("pair_index", sa.Integer(), nullable=False),
        sa.Column("task_id", _TEXT, nullable=False),
        sa.Column("suite", _TEXT, nullable=False),
        sa.Column("task_path", _TEXT, nullable=False),
        sa.Column("role", _TEXT, nullable=False),
        sa.Column("config", _TEXT, nullable=False),
        sa.Column("mcp_type", _TEXT, nullable=False),
        sa.Column(
            "state",
            _enum("queued", "running", "passed", "failed", "errored", "timeout", "cancelled"),
            nullable=False,
        ),
        sa.Column("timeout_sec", sa.Integer(), nullable=False),
        sa.Column("jobs_dir", _TEXT, nullable=False),
        sa.Column("log_path", _TEXT, nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("reward", sa.Float(), nullable=True),
        sa.Column("exception_type", _TEXT, nullable=True),
        sa.Column("reason", _TEXT, nullable=True),
        sa.Column("started_at", _TIME, nullable=True),
        sa.Column("finished_at", _TIME, nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("infra_failures", sa.Integer(), nullable=False),
        sa.Column("not_before", _TIME, nullable=True),
        sa.Column("account", _TEXT, nullable=True),
        sa.Column("host", _TEXT, nullable=True),
        sa.Column("marker", _TEXT, nullable=True),
        sa.Column("stop_kind", _TEXT, nullable=True),
        sa.Column("stop_sent_at", _TIME, nullable=True),
        sa.Column("killed_at", _TIME, nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "task_id", "role"),
    )
    op.create_index(op.f("ix_lanes_run_id"), "lanes", ["run_id"], unique=False)
    op.create_index(op.f("ix_lanes_state"), "lanes", ["state"], unique=False)
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target", _TEXT, nullable=False),
        sa.Column(
            "kind",
            _enum("card", "status", "summary", "ephemeral", "notice", "dm", "card_copy", "home"),
            nullable=False,
        ),
        sa.Column("state", _enum("pending", "sent", "dead"), nullable=False),
        sa.Column("request_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("text", _TEXT, nullable=True),
        sa.Column("response_url", _TEXT, nullable=True),
        sa.Column("user_id", _TEXT, nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _TIME, nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.Column("sent_at", _TIME, nullable=True),
        sa.Column("error", _TEXT, nullable=True),
        sa.ForeignKeyConstraint(["request_id"], ["run_requests.id"]),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_outbox_state"), "outbox", ["state"], unique=False)
    op.create_index(op.f("ix_outbox_target"), "outbox", ["target"], unique=False)


def downgrade() -> None:
    for table in (
        "outbox",
        "lanes",
        "runs",
        "audit_events",
        "approvals",
        "run_requests",
        "leases",
        "home_viewers",
        "accounts",
    ):
        op.drop_table(table)
