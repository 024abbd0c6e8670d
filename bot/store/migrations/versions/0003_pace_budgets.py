"""Pace budgets: Slack's rate budgets kept in the database, one for the whole deployment.

Until now each bot process paced its own card edits and posts in memory; a process that took the
timers over started from an empty budget and could edit a card its predecessor had just edited.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if not sa.inspect(op.get_bind()).has_table("pace_budgets"):
        op.create_table(
            "pace_budgets",
            sa.Column("name", sa.String(), nullable=False),
            sa.Column("state", sa.String(), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )


def downgrade() -> None:
    op.drop_table("pace_budgets")
