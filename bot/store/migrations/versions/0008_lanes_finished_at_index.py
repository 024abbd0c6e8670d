"""An index on `lanes.finished_at`: a run's ETA is the mean of the 200 latest finished lanes of its
suites (`store.queue.mean_lane_seconds`), which without it reads and sorts every lane of those suites,
a year of them on a busy bot. With it the newest lanes are read first and the query stops at 200.

A plain CREATE INDEX, inside the upgrade's transaction like every revision: on PostgreSQL it blocks
writes to `lanes` while it builds (bench/history.py prints how long on a generated history; a
single-column index over a year of lanes builds in seconds). `CREATE INDEX CONCURRENTLY` cannot run in
the one transaction that holds the migration lock (`bot/store/schema.py`).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

INDEX = "ix_lanes_finished_at"


def upgrade() -> None:
    present = {index["name"] for index in sa.inspect(op.get_bind()).get_indexes("lanes")}
    if INDEX not in present:  # a database made by `create_all` of a later build has it
        op.create_index(INDEX, "lanes", ["finished_at"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="lanes")
