"""Lane keys: each summary's valid lanes as numbers too (`run_summaries.valid_keys`, see
`bot/store/lane_keys.py`), so `/csb coverage --staging` adds up a year of staging runs without decoding
their JSON; filled here for the summaries already written, a few hundred at a time, from `valid_json`.

Revision ID: 0012
Revises: 0011
"""

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from bot.store.lane_keys import pack

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_TEXT = sa.String()
_INDEX = "uq_lane_keys_key"
_SUMMARIES_AT_ONCE = 200
_KEYS_AT_ONCE = 500  # keys per INSERT: under either database's limit on bound values
_KEYS = sa.table(
    "lane_keys",
    sa.column("id", sa.Integer),
    *(sa.column(name, _TEXT) for name in ("suite", "config", "task")),
)
_SUMMARIES = sa.table(
    "run_summaries", sa.column("run_id", sa.Integer), sa.column("valid_json", _TEXT), sa.column("valid_keys")
)


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if not inspector.has_table("lane_keys"):  # a database made by `create_all` of a later build has it
        op.create_table(
            "lane_keys",
            sa.Column("id", sa.Integer(), nullable=False),
            *(sa.Column(name, _TEXT, nullable=False) for name in ("suite", "config", "task")),
            sa.PrimaryKeyConstraint("id"),
        )
    if _INDEX not in {index["name"] for index in sa.inspect(bind).get_indexes("lane_keys")}:
        op.create_index(_INDEX, "lane_keys", ["suite", "config", "task"], unique=True)
    if "valid_keys" not in {column["name"] for column in inspector.get_columns("run_summaries")}:
        op.add_column("run_summaries", sa.Column("valid_keys", sa.LargeBinary(), nullable=True))
    _fill(bind)


def _fill(bind: sa.Connection) -> None:
    """Every summary without its numbers gets them, `_SUMMARIES_AT_ONCE` at a time."""
    insert = pg_insert if bind.dialect.name == "postgresql" else sqlite_insert
    numbers: dict[tuple[str, str, str], int] = {}
    while True:
        batch = bind.execute(
            sa.select(_SUMMARIES.c.run_id, _SUMMARIES.c.valid_json)
            .where(_SUMMARIES.c.valid_keys.is_(None))
            .order_by(_SUMMARIES.c.run_id)
            .limit(_SUMMARIES_AT_ONCE)
        ).all()
        if not batch:
            return
        lanes = {
            run_id: [(suite, config, task) for suite, config, task in json.loads(valid)]
            for run_id, valid in batch
        }
        new = list(dict.fromkeys(lane for kept in lanes.values() for lane in kept if lane not in numbers))
        if new:
            for first in range(0, len(new), _KEYS_AT_ONCE):
                rows = [
                    {"suite": s, "config": c, "task": t} for s, c, t in new[first : first + _KEYS_AT_ONCE]
                ]
                statement = insert(_KEYS).values(rows)
                bind.execute(statement.on_conflict_do_nothing(index_elements=["suite", "config", "task"]))
            found = bind.execute(sa.select(_KEYS.c.id, _KEYS.c.suite, _KEYS.c.config, _KEYS.c.task))
            numbers = {(suite, config, task): key_id for key_id, suite, config, task in found}
        bind.execute(
            _SUMMARIES.update().where(_SUMMARIES.c.run_id == sa.bindparam("id")),
            [
                {"id": run_id, "valid_keys": pack([numbers[lane] for lane in kept])}
                for run_id, kept in lanes.items()
            ],
        )


def downgrade() -> None:
    op.drop_column("run_summaries", "valid_keys")
    op.drop_index(_INDEX, table_name="lane_keys")
    op.drop_table("lane_keys")
