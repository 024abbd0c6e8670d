"""A lane's reason as fields: its kind and the log's telling line beside the message.

Before, the log's line was joined onto the message (`…; log: <line>`) and split again by the report.
Old rows are carried over: such a reason is cut at its first `; log: ` into the message and the line, and
the kind is told from the words the bot wrote then (the exception's type, Harbor's exit, the time limit).
The downgrade joins them again as they were.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_LOG = "; log: "  # the old separator, read here once and nowhere else
_LANES = sa.table(
    "lanes",
    sa.column("id", sa.Integer),
    sa.column("reason", sa.String),
    sa.column("exception_type", sa.String),
    sa.column("reason_kind", sa.String),
    sa.column("log_line", sa.String),
)


def upgrade() -> None:
    present = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("lanes")}
    for name in ("reason_kind", "log_line"):
        if name not in present:  # a database made by `create_all` of a later build has them
            op.add_column("lanes", sa.Column(name, sa.String(), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(_LANES.c.id, _LANES.c.reason, _LANES.c.exception_type).where(_LANES.c.reason.is_not(None))
    )
    for lane_id, reason, exception_type in rows.all():
        message, _, line = reason.partition(_LOG)
        if message.startswith("log: "):  # an exception without a message, then the log's line
            message, line = "", message.removeprefix("log: ")
        bind.execute(
            sa.update(_LANES)
            .where(_LANES.c.id == lane_id)
            .values(reason=message or None, log_line=line or None, reason_kind=_kind(message, exception_type))
        )


def _kind(message: str, exception_type: str | None) -> str | None:
    if exception_type == "result_json_corrupt":
        return "unreadable"
    if exception_type:
        return "exception"
    if message.startswith("no trial result after") or message.startswith("lost with its host"):
        return "no_result_in_time"
    if message.endswith("; no trial result"):
        return "executor"
    if "without a trial result" in message:
        return "no_result"
    return None


def downgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(_LANES.c.id, _LANES.c.reason, _LANES.c.log_line).where(_LANES.c.log_line.is_not(None))
    )
    for lane_id, reason, line in rows.all():
        joined = f"{reason}{_LOG}{line}" if reason else f"log: {line}"
        bind.execute(sa.update(_LANES).where(_LANES.c.id == lane_id).values(reason=joined))
    for name in ("log_line", "reason_kind"):
        op.drop_column("lanes", name)
