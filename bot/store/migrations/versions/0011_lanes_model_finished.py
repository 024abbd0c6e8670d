"""The ETA's fallback to a model's recent lanes (`bot/store/queue.py`, for a run whose suites have no
finished lane yet) reads `ix_lanes_model_finished` from its newest end instead of sorting every lane of
that model. Built without blocking writes to `lanes` on PostgreSQL (`bot/store/online_index.py`).

Revision ID: 0011
Revises: 0010
"""

from alembic import op

from bot.store.online_index import create_index

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

NAME = "ix_lanes_model_finished"
COLUMNS = ("model", "finished_at", "state", "started_at")


def upgrade() -> None:
    create_index(NAME, "lanes", COLUMNS)


def downgrade() -> None:
    op.drop_index(NAME, table_name="lanes")
