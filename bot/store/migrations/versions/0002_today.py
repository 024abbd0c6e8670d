"""From the first schema to today's: enum values, the replay guard, post attempts, one pending row a message.

- Enum columns held the members' names (`PENDING`); they hold their values (`pending`) from now on, the
  same text a person reads in the code and in `csb-bot` output.
- `outbox.post_attempted_at`: set before each chat.postMessage, so a re-send looks for the message first.
- `seen_interactions`: clicks already handled, shared by every bot process.
- A partial unique index keeps one pending outbox row per message, so writers in two processes cannot
  both add one (they meet in `INSERT … ON CONFLICT`). Older duplicates, if any, are set aside first.

Each step checks what is there: a database written by a build between the two schemas (it made the new
column or table with create_all) is brought up to date the same way.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ENUM_COLUMNS = {
    "run_requests": ["state"],
    "runs": ["state"],
    "lanes": ["state"],
    "outbox": ["kind", "state"],
}
ONE_PENDING = "uq_outbox_pending_target"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table, columns in _ENUM_COLUMNS.items():
        for column in columns:
            op.execute(f"UPDATE {table} SET {column} = lower({column}) WHERE {column} <> lower({column})")
    if "post_attempted_at" not in {column["name"] for column in inspector.get_columns("outbox")}:
        op.add_column("outbox", sa.Column("post_attempted_at", sa.DateTime(timezone=True), nullable=True))
    if not inspector.has_table("seen_interactions"):
        op.create_table(
            "seen_interactions",
            sa.Column("key", sa.String(), nullable=False),
            sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
            sa.PrimaryKeyConstraint("key"),
        )
    op.execute(
        "UPDATE outbox SET state = 'dead', error = 'a second pending row of the same message' "
        "WHERE state = 'pending' AND id NOT IN "
        "(SELECT min(id) FROM outbox WHERE state = 'pending' GROUP BY target)"
    )
    pending = sa.text("state = 'pending'")
    op.create_index(
        ONE_PENDING,
        "outbox",
        ["target"],
        unique=True,
        sqlite_where=pending,
        postgresql_where=pending,
    )


def downgrade() -> None:
    op.drop_index(ONE_PENDING, table_name="outbox")
    for table, columns in _ENUM_COLUMNS.items():
        for column in columns:
            op.execute(f"UPDATE {table} SET {column} = upper({column})")
    op.drop_table("seen_interactions")
    op.drop_column("outbox", "post_attempted_at")
