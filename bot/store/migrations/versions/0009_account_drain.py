"""Accounts drained by `/csb drain-account`, their audit trail, the lane columns of the stall watchdog, and
the orphaned lane processes the engine finds.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_TEXT = sa.String()
_TIME = sa.DateTime(timezone=True)
_ACCOUNT_COLUMNS = (("drained_at", _TIME), ("drained_by", _TEXT))
_LANE_COLUMNS = (("stop_wanted", _TEXT), ("stall_noted", sa.Integer()), ("long_noted", sa.Integer()))


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table, columns in (("accounts", _ACCOUNT_COLUMNS), ("lanes", _LANE_COLUMNS)):
        present = {column["name"] for column in inspector.get_columns(table)}
        for name, kind in columns:
            if name not in present:  # a database made by `create_all` of a later build has them
                op.add_column(table, sa.Column(name, kind, nullable=True))
    if not inspector.has_table("account_events"):
        op.create_table(
            "account_events",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("home", _TEXT, nullable=False),
            sa.Column("action", _TEXT, nullable=False),
            sa.Column("actor", _TEXT, nullable=False),
            sa.Column("at", _TIME, nullable=False),
            sa.Column("detail", _TEXT, nullable=True),
            sa.PrimaryKeyConstraint("id"),
        )
        op.create_index(op.f("ix_account_events_home"), "account_events", ["home"], unique=False)
    if not inspector.has_table("orphan_processes"):
        op.create_table(
            "orphan_processes",
            sa.Column("marker", _TEXT, nullable=False),
            sa.Column("host", _TEXT, nullable=False),
            sa.Column("pid", sa.Integer(), nullable=False),
            sa.Column("job", _TEXT, nullable=True),
            sa.Column("seen_at", _TIME, nullable=False),
            sa.PrimaryKeyConstraint("marker"),
        )
        op.create_index(op.f("ix_orphan_processes_host"), "orphan_processes", ["host"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_orphan_processes_host"), table_name="orphan_processes")
    op.drop_table("orphan_processes")
    op.drop_index(op.f("ix_account_events_home"), table_name="account_events")
    op.drop_table("account_events")
    for table, columns in (("lanes", _LANE_COLUMNS), ("accounts", _ACCOUNT_COLUMNS)):
        for name, _ in reversed(columns):
            op.drop_column(table, name)
