"""`runs.status_ts` goes: nothing reads or writes it. A run is shown on its request's card, whose ts is
`run_requests.card_ts`.

The column is dropped only where it is (a database made by `create_all` of a later build lacks it).
SQLite drops a column in place since 3.35; PostgreSQL always has.

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
    if "status_ts" in {column["name"] for column in sa.inspect(op.get_bind()).get_columns("runs")}:
        op.drop_column("runs", "status_ts")


def downgrade() -> None:
    op.add_column("runs", sa.Column("status_ts", sa.String(), nullable=True))
