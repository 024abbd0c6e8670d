"""Run summaries: a closed run's figures in one row, so `/csb runs` and App Home read no lanes; filled here
for the runs already closed, a few at a time, from their lanes as the bot sums them when a run closes.

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

from bot.domain.run_summary import run_figures
from bot.domain.spec import RunSpec
from bot.domain.states import FINAL_RUN_STATES, RunState
from bot.store import models
from bot.store.narrow import table_of
from bot.store.summaries import LANE_COLUMNS, SummedRow, kept_lanes, summary_row

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

_TEXT = sa.String()
_TIME = sa.DateTime(timezone=True)
_RUN_STATES = tuple(state.value for state in RunState)
_INDEXES = (
    ("ix_run_summaries_finished", ["state", "finished_at", "run_id"]),
    ("ix_run_summaries_category", ["category", "state", "finished_at"]),
    ("ix_run_summaries_requester", ["requester", "run_id"]),
)
_RUNS_AT_ONCE = 20


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    if not inspector.has_table("run_summaries"):  # a database made by `create_all` of a later build has it
        op.create_table(
            "run_summaries",
            sa.Column("run_id", sa.Integer(), nullable=False),
            sa.Column(
                "state", sa.Enum(*_RUN_STATES, native_enum=False, create_constraint=False), nullable=False
            ),
            sa.Column("finished_at", _TIME, nullable=True),
            sa.Column("requester", _TEXT, nullable=False),
            sa.Column("channel_id", _TEXT, nullable=False),
            sa.Column("category", _TEXT, nullable=False),
            sa.Column("model", _TEXT, nullable=False),
            sa.Column("suite_label", _TEXT, nullable=False),
            sa.Column("suite", _TEXT, nullable=True),
            sa.Column("suites_json", _TEXT, nullable=False),
            *(
                sa.Column(name, sa.Integer(), nullable=False)
                for name in ("pairs_done", "pairs_total", "baseline_passed", "baseline_valid")
            ),
            sa.Column("baseline_mean_reward", sa.Float(), nullable=True),
            sa.Column("mcp_passed", sa.Integer(), nullable=False),
            sa.Column("mcp_valid", sa.Integer(), nullable=False),
            sa.Column("mcp_mean_reward", sa.Float(), nullable=True),
            *(
                sa.Column(name, sa.Integer(), nullable=False)
                for name in ("baseline_lanes", "baseline_lanes_passed", "mcp_lanes", "mcp_lanes_passed")
            ),
            sa.Column("outcomes_json", _TEXT, nullable=False),
            sa.Column("cost_usd", sa.Float(), nullable=False),
            sa.Column("input_tokens", sa.Integer(), nullable=False),
            sa.Column("output_tokens", sa.Integer(), nullable=False),
            sa.Column("run_dir", _TEXT, nullable=False),
            sa.Column("valid_json", _TEXT, nullable=False),
            sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
            sa.PrimaryKeyConstraint("run_id"),
        )
    present = {index["name"] for index in sa.inspect(bind).get_indexes("run_summaries")}
    for name, columns in _INDEXES:
        if name not in present:
            op.create_index(name, "run_summaries", columns)
    _fill(bind)


def _fill(bind: sa.Connection) -> None:
    """Every closed run without a summary gets one, `_RUNS_AT_ONCE` runs' lanes read at a time."""
    runs, requests = table_of(models.Run), table_of(models.RunRequest)
    lanes, summaries = table_of(models.Lane), table_of(models.RunSummary)
    closed = bind.execute(
        sa.select(runs.c.id, runs.c.state, runs.c.finished_at, runs.c.request_id, runs.c.run_dir)
        .where(
            runs.c.state.in_(list(FINAL_RUN_STATES)),
            ~sa.exists().where(summaries.c.run_id == runs.c.id),
        )
        .order_by(runs.c.id)
    ).all()
    for first in range(0, len(closed), _RUNS_AT_ONCE):
        batch = closed[first : first + _RUNS_AT_ONCE]
        of_run: dict[int, list[SummedRow]] = {run.id: [] for run in batch}
        rows = bind.execute(
            sa.select(lanes.c.run_id, *(lanes.c[name] for name in LANE_COLUMNS)).where(
                lanes.c.run_id.in_(list(of_run))
            )
        )
        for run_id, *columns in rows:
            of_run[run_id].append(SummedRow(*columns))
        asked = bind.execute(
            sa.select(
                requests.c.id,
                requests.c.requester,
                requests.c.channel_id,
                requests.c.category,
                requests.c.spec_json,
            ).where(requests.c.id.in_([run.request_id for run in batch]))
        )
        request_of = {request.id: request for request in asked}
        values = []
        for run in batch:
            request = request_of[run.request_id]
            spec = RunSpec.model_validate_json(request.spec_json)
            summed = sorted(of_run[run.id], key=lambda lane: (lane.pair_index, lane.role))
            row = summary_row(run.id, run.state, run.finished_at, request, spec, run_figures(summed))
            values.append(row | kept_lanes(run.run_dir, summed))
        bind.execute(sa.insert(summaries), values)


def downgrade() -> None:
    for name, _ in reversed(_INDEXES):
        op.drop_index(name, table_name="run_summaries")
    op.drop_table("run_summaries")
