"""CSB's verdicts on a lane's trial, stored with the lane when it ends (`bot.domain.verdict`).

Columns for what the report counts and groups by (the MANIFEST's and the status tool's statuses, the
fingerprint, MCP calls, baseline contamination, the four token counts, the cost); the whole record, flags
and advice included, as JSON in `verdict_json`. Lanes that ended before have none (NULL): the report reads
them as it did.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

COLUMNS = (
    ("manifest_status", sa.String),
    ("status_tool", sa.String),
    ("fingerprint", sa.String),
    ("mcp_calls", sa.Integer),
    ("contaminated", sa.Boolean),
    ("input_tokens", sa.Integer),
    ("output_tokens", sa.Integer),
    ("cache_write_tokens", sa.Integer),
    ("cache_read_tokens", sa.Integer),
    ("cost_usd", sa.Float),
    ("verdict_json", sa.String),
)


def upgrade() -> None:
    present = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("lanes")}
    for name, kind in COLUMNS:
        if name not in present:  # a database made by `create_all` of a later build has them
            op.add_column("lanes", sa.Column(name, kind(), nullable=True))


def downgrade() -> None:
    for name, _ in reversed(COLUMNS):
        op.drop_column("lanes", name)
