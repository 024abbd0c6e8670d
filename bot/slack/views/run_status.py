"""The run's live status message in the card's thread, and the per-task summary reply at the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from slack_sdk.models.blocks import Block, ContextBlock, MarkdownTextObject, SectionBlock

from bot.domain.outcome import LaneStatus
from bot.domain.spec import LaneRole
from bot.slack.views.format import chunk_lines, reward

MAX_SUMMARY_SECTIONS = 45  # leaves room under Slack's 50 blocks per message
ROLE_LABEL = {LaneRole.BASELINE.value: "baseline", LaneRole.MCP.value: "MCP"}
_COUNTED = (LaneStatus.PASSED, LaneStatus.FAILED, LaneStatus.ERRORED, LaneStatus.TIMEOUT)


@dataclass(frozen=True)
class LaneView:
    task_id: str
    pair_index: int
    role: str
    status: LaneStatus
    reward: float | None = None


@dataclass(frozen=True)
class RunView:
    run_id: int
    run_dir: str
    state: str
    lanes: Sequence[LaneView]

    @property
    def roles(self) -> list[str]:
        return sorted({lane.role for lane in self.lanes}, key=lambda r: 0 if r == LaneRole.BASELINE else 1)


def status_message(run: RunView) -> list[Block]:
    done = sum(1 for lane in run.lanes if lane.status.is_final)
    running = sum(1 for lane in run.lanes if lane.status is LaneStatus.RUNNING)
    queued = sum(1 for lane in run.lanes if lane.status is LaneStatus.QUEUED)
    head = (
        f"*Run #{run.run_id}* {run.state}: {done}/{len(run.lanes)} lanes done · "
        f"{running} running · {queued} queued"
    )
    lines = [head, *(_role_counts(run, role) for role in run.roles)]
    return [
        SectionBlock(text=MarkdownTextObject(text="\n".join(lines))),
        ContextBlock(elements=[MarkdownTextObject(text=f"Output: `runs/…/{run.run_dir}`")]),
    ]


def status_fallback_text(run: RunView) -> str:
    done = sum(1 for lane in run.lanes if lane.status.is_final)
    return f"Run #{run.run_id} {run.state}: {done}/{len(run.lanes)} lanes done"


def summary_message(run: RunView) -> list[Block]:
    """One line per task in CSB's words, then the pass counts of each lane."""
    task_lines = [_task_line(run, lanes) for lanes in _by_task(run).values()]
    totals = [_role_counts(run, role) for role in run.roles]
    head = f"*Run #{run.run_id} finished* ({len(task_lines)} tasks)"
    sections = chunk_lines([head, *task_lines])
    if len(sections) > MAX_SUMMARY_SECTIONS:
        cut = len(sections) - MAX_SUMMARY_SECTIONS
        sections = [*sections[:MAX_SUMMARY_SECTIONS], f"… {cut} more sections not shown"]
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=text)) for text in sections]
    blocks.append(SectionBlock(text=MarkdownTextObject(text="\n".join(totals))))
    return blocks


def summary_fallback_text(run: RunView) -> str:
    return f"Run #{run.run_id} finished: " + "; ".join(
        _role_counts(run, role, plain=True) for role in run.roles
    )


def _by_task(run: RunView) -> dict[int, list[LaneView]]:
    tasks: dict[int, list[LaneView]] = {}
    for lane in run.lanes:
        tasks.setdefault(lane.pair_index, []).append(lane)
    return dict(sorted(tasks.items()))


def _task_line(run: RunView, lanes: list[LaneView]) -> str:
    by_role = {lane.role: lane for lane in lanes}
    parts = [
        f"{ROLE_LABEL.get(role, role)} {by_role[role].status.value} {reward(by_role[role].reward)}"
        for role in run.roles
        if role in by_role
    ]
    return f"`{lanes[0].task_id}`  " + " · ".join(parts)


def _role_counts(run: RunView, role: str, *, plain: bool = False) -> str:
    lanes = [lane for lane in run.lanes if lane.role == role]
    counts = ", ".join(f"{sum(1 for lane in lanes if lane.status is s)} {s.value}" for s in _COUNTED)
    label = ROLE_LABEL.get(role, role)
    passed = sum(1 for lane in lanes if lane.status is LaneStatus.PASSED)
    if plain:
        return f"{label} {passed}/{len(lanes)} passed"
    return f"*{label}*: {passed}/{len(lanes)} passed ({counts})"
