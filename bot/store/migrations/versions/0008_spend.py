"""Spend: the indexes the estimate and a month's spend read through, and who approved a request past its
monthly budget's block line (its run is then not drained for the budget).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_INDEXES = (
    ("ix_lanes_history", ["suite", "config", "finished_at"]),
    ("ix_lanes_suite_finished", ["suite", "finished_at"]),
    ("ix_lanes_finished", ["finished_at"]),
)


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # A database made by `create_all` of a later build has them already.
    if "budget_override_by" not in {column["name"] for column in inspector.get_columns("run_requests")}:
        op.add_column("run_requests", sa.Column("budget_override_by", sa.String(), nullable=True))
    present = {index["name"] for index in inspector.get_indexes("lanes")}
    for name, columns in _INDEXES:
        if name not in present:
            op.create_index(name, "lanes", columns)


def downgrade() -> None:
    for name, _ in reversed(_INDEXES):
        op.drop_index(name, table_name="lanes")
    with op.batch_alter_table("run_requests") as batch:
        batch.drop_column("budget_override_by")
