"""The approved card's living part: where the run is, how far it got, and the Cancel button."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, MarkdownTextObject, SectionBlock

from bot.domain.causes import CauseGroup
from bot.domain.outcome import LaneStatus
from bot.domain.states import (
    CANCELLABLE_RUN_STATES,
    COMPLETED_LANE_STATES,
    RUN_STATES_WITH_ETA,
    STOPPING_RUN_STATES,
    RunState,
)
from bot.domain.words import plural
from bot.slack.ids import ActionId
from bot.slack.views.causes import cause_lines
from bot.slack.views.format import SECTION_LIMIT, clip, shown, user

BAR_WIDTH = 20
_COUNTED = COMPLETED_LANE_STATES
REASON_SHOWN = 1500  # the audit trail keeps a stop reason whole
ROLE_LABEL = {"baseline": "baseline", "mcp": "MCP"}


@dataclass(frozen=True)
class RunCardView:
    run_id: int
    state: RunState
    pairs_done: int
    pairs_total: int
    lanes_running: int
    lanes_queued: int
    lanes_cancelled: int = 0
    lanes_retrying: int = 0  # queued again after an infrastructure failure, waiting out their backoff
    counts: dict[str, dict[LaneStatus, int]] = field(default_factory=dict)  # role → status → lanes
    queue_position: int | None = None
    eta_seconds: float | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    progress_at: datetime | None = None  # when `pairs_done` was reached: the last of their lanes' ends
    now: datetime | None = None
    stopped_by: str | None = None
    stop_reason: str | None = None
    paused_reason: str | None = None
    causes: tuple[CauseGroup, ...] = ()  # the ended lanes' failures, grouped by cause
    tasks_not_run: int = 0  # tasks with a lane still queued or cancelled (never ran to an end)
    long_lanes: tuple[LongLane, ...] = ()  # running lanes past `long_lane_share` of their time limit


@dataclass(frozen=True)
class LongLane:
    """A running lane the stall watchdog marked as past its share of the time limit."""

    name: str  # `<task>/<role>`
    attempt: int
    elapsed: timedelta
    limit: timedelta


CAUSES_SHOWN = 5


def run_blocks(run: RunCardView) -> list[Block]:
    lines = [_state_line(run), _progress_line(run)]
    lines += [_role_line(role, counts) for role, counts in run.counts.items()]
    timing = _timing(run)
    if timing:
        lines.append(timing)
    if run.state == RunState.PAUSED and run.tasks_not_run:
        lines.append(_paused_rest(run))
    if run.long_lanes:
        lines.append(_long_line(run.long_lanes))
    if run.causes:
        lines += ["*Failures by cause*", *cause_lines(run.causes, limit=CAUSES_SHOWN)]
    text = clip("\n".join(lines), SECTION_LIMIT)
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=text))]
    if run.state in CANCELLABLE_RUN_STATES:
        blocks.append(
            ActionsBlock(
                block_id=f"run:{run.run_id}",
                elements=[
                    ButtonElement(
                        text="Cancel", action_id=ActionId.CANCEL, value=str(run.run_id), style="danger"
                    )
                ],
            )
        )
    return blocks


def _long_line(long: tuple[LongLane, ...]) -> str:
    shown_lanes = [
        f"`{clip(lane.name, 120)}` ({duration(lane.elapsed)} of {duration(lane.limit)})"
        for lane in long[:LONG_SHOWN]
    ]
    more = f" and {len(long) - LONG_SHOWN} more" if len(long) > LONG_SHOWN else ""
    return f":hourglass: *Near their time limit*: {', '.join(shown_lanes)}{more}"


LONG_SHOWN = 5


def progress_bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = round(width * done / total) if total else 0
    return "▓" * filled + "░" * (width - filled)


def _state_line(run: RunCardView) -> str:
    if run.state == RunState.QUEUED:
        where = f" #{run.queue_position} in the queue" if run.queue_position else ""
        return f":hourglass_flowing_sand: *Queued*{where}"
    if run.state == RunState.PAUSED:
        why = shown(run.paused_reason or "too many infrastructure failures")
        return f":double_vertical_bar: *Paused*: {why}; `/csb resume {run.run_id}` once fixed"
    if run.state in (*STOPPING_RUN_STATES, RunState.CANCELLED):
        by = f" by {user(run.stopped_by)}" if run.stopped_by else ""
        why = f": {shown(run.stop_reason, REASON_SHOWN)}" if run.stop_reason else ""
        return f":octagonal_sign: *{run.state.capitalize()}*{by}{why}"
    if run.state == RunState.FINISHED:
        return ":checkered_flag: *Finished*; the paired report is in the thread"
    return ":arrow_forward: *Running*"


def _paused_rest(run: RunCardView) -> str:
    """A paused run still holds its queued lanes, so no request for them is offered now: it would run
    the same tasks beside this run's own lanes when it is resumed."""
    return (
        f"*{plural(run.tasks_not_run, 'task')} not run*: they start when the run is resumed "
        f"(`/csb resume {run.run_id}`); if it is cancelled instead, its report offers *Run the rest*"
    )


def _progress_line(run: RunCardView) -> str:
    bar = progress_bar(run.pairs_done, run.pairs_total)
    line = (
        f"`{bar}` {run.pairs_done}/{plural(run.pairs_total, 'pair')} done · "
        f"{plural(run.lanes_running, 'lane')} running · {run.lanes_queued} queued"
    )
    return line + (f" · {run.lanes_cancelled} cancelled" if run.lanes_cancelled else "")


def _role_line(role: str, counts: dict[LaneStatus, int]) -> str:
    parts = ", ".join(f"{counts.get(status, 0)} {status.value}" for status in _COUNTED)
    return f"*{ROLE_LABEL.get(role, role)}*: {parts}"


def _timing(run: RunCardView) -> str | None:
    parts = []
    if run.started_at and run.now:
        elapsed = (run.finished_at or run.now) - run.started_at
        parts.append(f"elapsed {duration(elapsed)}")
    eta = eta_text(run.state, run.eta_seconds)
    if eta:
        parts.append(eta)
    return " · ".join(parts) or None


def eta_text(state: RunState, seconds: float | None) -> str:
    """When a queued run starts or a running one ends ("ETA ~4 min"), "… unknown" until comparable
    lanes have finished to measure by, and "" for a run whose next lanes will not start (paused,
    stopping or ended): it has no ETA to give."""
    if state not in RUN_STATES_WITH_ETA:
        return ""
    queued = state == RunState.QUEUED
    if seconds is None:
        return "start time unknown" if queued else "ETA unknown"
    return f"{'starts in' if queued else 'ETA'} ~{duration(timedelta(seconds=seconds))}"


def duration(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"
