"""Spend: each lane keeps its run's model (filled in from the runs for the lanes there are), the indexes
the estimate and a month's spend read through, and who approved a request past its monthly budget's
block line (its run is then not drained for the budget).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

# Keys first, then the columns the estimate reads, so its queries are answered from the index alone.
_INDEXES = (
    ("ix_lanes_history", ["suite", "config", "model", "finished_at", "state", "cost_usd", "started_at"]),
    ("ix_lanes_suite_finished", ["suite", "finished_at", "state", "cost_usd", "started_at"]),
    ("ix_lanes_finished", ["finished_at", "run_id", "state", "cost_usd"]),
)


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # A database made by `create_all` of a later build has them already.
    if "budget_override_by" not in {column["name"] for column in inspector.get_columns("run_requests")}:
        op.add_column("run_requests", sa.Column("budget_override_by", sa.String(), nullable=True))
    if "model" not in {column["name"] for column in inspector.get_columns("lanes")}:
        op.add_column("lanes", sa.Column("model", sa.String(), nullable=True))
        runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("model", sa.String))
        lanes = sa.table("lanes", sa.column("run_id", sa.Integer), sa.column("model", sa.String))
        of_run = sa.select(runs.c.model).where(runs.c.id == lanes.c.run_id).scalar_subquery()
        op.execute(sa.update(lanes).values(model=of_run))
    present = {index["name"] for index in inspector.get_indexes("lanes")}
    for name, columns in _INDEXES:
        if name not in present:
            op.create_index(name, "lanes", columns)


def downgrade() -> None:
    for name, _ in reversed(_INDEXES):
        op.drop_index(name, table_name="lanes")
    with op.batch_alter_table("lanes") as batch:
        batch.drop_column("model")
    with op.batch_alter_table("run_requests") as batch:
        batch.drop_column("budget_override_by")
