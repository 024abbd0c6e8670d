"""Promotions: `/csb promote <run>` as a row with its card, approvals and the journal of its steps, and the
one lock on `runs/official` that serialises them across bot processes.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_TEXT = sa.String()
_TIME = sa.DateTime(timezone=True)
_STATES = ("pending", "approved", "executing", "promoted", "undone", "lost", "rejected", "void")


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table("promotions"):  # a database made by `create_all` of a later build has it
        op.create_table(
            "promotions",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("run_id", sa.Integer(), nullable=False),
            sa.Column("state", sa.Enum(*_STATES, native_enum=False, create_constraint=False), nullable=False),
            sa.Column("requester", _TEXT, nullable=False),
            sa.Column("channel_id", _TEXT, nullable=False),
            sa.Column("card_ts", _TEXT, nullable=True),
            sa.Column("force", sa.Boolean(), nullable=False),
            sa.Column("quarantine", sa.Boolean(), nullable=False),
            sa.Column("digest", _TEXT, nullable=False),
            sa.Column("preview_json", _TEXT, nullable=False),
            sa.Column("plan_json", _TEXT, nullable=False),
            sa.Column("approvers_json", _TEXT, nullable=False),
            sa.Column("step", _TEXT, nullable=True),
            sa.Column("phase", _TEXT, nullable=True),
            sa.Column("journal_json", _TEXT, nullable=False),
            sa.Column("error", _TEXT, nullable=True),
            sa.Column("decided_by", _TEXT, nullable=True),
            sa.Column("after_restart", sa.Boolean(), nullable=False),
            sa.Column("created_at", _TIME, nullable=False),
            sa.Column("updated_at", _TIME, nullable=False),
            sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index(op.f("ix_promotions_run_id"), "promotions", ["run_id"], unique=False)
        op.create_index(op.f("ix_promotions_state"), "promotions", ["state"], unique=False)
    if not inspector.has_table("promotion_locks"):
        op.create_table(
            "promotion_locks",
            sa.Column("scope", _TEXT, nullable=False),
            sa.Column("promotion_id", sa.Integer(), nullable=False),
            sa.Column("taken_at", _TIME, nullable=False),
            sa.PrimaryKeyConstraint("scope"),
        )


def downgrade() -> None:
    op.drop_table("promotion_locks")
    op.drop_index(op.f("ix_promotions_state"), table_name="promotions")
    op.drop_index(op.f("ix_promotions_run_id"), table_name="promotions")
    op.drop_table("promotions")
