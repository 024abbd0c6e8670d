"""Pace budgets, and one request per slash command, for a deployment of several bot processes.

- `pace_budgets`: Slack's rate budgets kept in the database. Until now each bot process paced its own
  card edits and posts in memory; a process that took the timers over started from an empty budget and
  could edit a card its predecessor had just edited.
- `run_requests.trigger_id`, unique: the same slash command delivered twice (to one process or to two)
  makes one request, not two cards. Requests made before have none.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


TRIGGER_INDEX = "uq_run_requests_trigger"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "trigger_id" not in {column["name"] for column in inspector.get_columns("run_requests")}:
        op.add_column("run_requests", sa.Column("trigger_id", sa.String(), nullable=True))
    op.create_index(TRIGGER_INDEX, "run_requests", ["trigger_id"], unique=True)
    if not inspector.has_table("pace_budgets"):
        op.create_table(
            "pace_budgets",
            sa.Column("name", sa.String(), nullable=False),
            sa.Column("state", sa.String(), nullable=False),
            sa.PrimaryKeyConstraint("name"),
        )


def downgrade() -> None:
    op.drop_table("pace_budgets")
    op.drop_index(TRIGGER_INDEX, table_name="run_requests")
    op.drop_column("run_requests", "trigger_id")
