"""The words of `/csb coverage`: per suite, the valid runs per lane against the target, the tasks with
none, and CSB's variance waves. Lists are cut at `LISTED` entries with a count of the rest."""

from __future__ import annotations

from slack_sdk.models.blocks import ActionsBlock, Block, ButtonElement, MarkdownTextObject, SectionBlock

from bot.domain.coverage import SuiteCoverage, Wave, WaveMode
from bot.domain.spec import LaneRole
from bot.domain.words import plural
from bot.services.coverage import CoverageAnswer, WaveRequest
from bot.services.coverage_args import CoverageArgs
from bot.slack.ids import ActionId
from bot.slack.views.format import chunk_lines, code, shown

LISTED = 10
_ROLE_WORDS = {LaneRole.BASELINE: "baseline", LaneRole.MCP: "MCP"}
_MODE_WORDS = {
    WaveMode.BOTH: "both lanes",
    WaveMode.BASELINE_ONLY: "baseline only (`--baseline-only`)",
    WaveMode.MCP_ONLY: "MCP only (`--full-only`)",
}


def coverage_text(answer: CoverageAnswer) -> list[str]:
    """The answer in parts of at most one section each, in order."""
    result = answer.coverage
    lines = [
        f"*Coverage* of {code(answer.selection)} against "
        f"{plural(result.target, 'valid run')} per task and lane",
        _sources(answer),
    ]
    for suite in result.suites:
        lines.extend(_suite_lines(suite))
    if result.waves:
        lines.append(
            f"*Variance plan* (CSB's `plan_variance_runs.py --target {result.target}`; "
            "*Plan variance* or `--plan` requests it, *Fill gaps* or `--fill` the tasks with none):"
        )
        lines.extend(f"• {_wave_line(wave)}" for wave in result.waves)
    else:
        lines.append(f"Every task has {plural(result.target, 'valid run')} on both lanes: nothing to plan.")
    if result.extended_configs:
        names = ", ".join(code(c) for c in result.extended_configs)
        lines.append(
            f"_CSB's plan_variance_runs.py does not count {names} lanes; same rule applied (counted as MCP)._"
        )
    return chunk_lines(lines)


def coverage_comment(user_id: str) -> str:
    return f"<@{user_id}> asked for coverage: valid runs done per suite and lane, as a share of the target."


def _sources(answer: CoverageAnswer) -> str:
    parts = [
        "official: the MANIFEST's run_history"
        if answer.manifest
        else "official: no MANIFEST yet (none counted)"
    ]
    if answer.staging_runs is not None:
        model = f" of models matching {code(answer.model)}" if answer.model else ""
        parts.append(f"staging: {plural(answer.staging_runs, 'finished run')}{model} not in the MANIFEST")
    if answer.model and answer.manifest:
        parts.append("the MANIFEST's run_history records no model: its runs count whatever the model")
    if answer.excluded:
        parts.append(f"{plural(answer.excluded, 'excluded task')} left out")
    return "_" + "; ".join(parts) + "_"


def _suite_lines(suite: SuiteCoverage) -> list[str]:
    head = (
        f"*{shown(suite.suite)}* ({plural(suite.tasks, 'task')}): "
        f"baseline {suite.runs.baseline}/{suite.expected}, "
        f"MCP {suite.runs.mcp}/{suite.expected} runs; still needed: {suite.deficit.baseline} baseline, "
        f"{suite.deficit.mcp} MCP"
    )
    lines = [head]
    for role in LaneRole:
        missing = suite.without[role]
        if missing:
            lines.append(f"  no valid {_ROLE_WORDS[role]} run: {len(missing)}  {_listed(missing)}")
    return lines


def _wave_line(wave: Wave) -> str:
    tasks, lanes = plural(len(wave.tasks), "task"), plural(wave.lanes, "lane")
    return f"wave {wave.number}, {_MODE_WORDS[wave.mode]}: {tasks} ({lanes})"


def _listed(task_ids: tuple[str, ...]) -> str:
    shown_ids = ", ".join(code(t) for t in task_ids[:LISTED])
    rest = len(task_ids) - LISTED
    return shown_ids + (f" and {rest} more" if rest > 0 else "")


def waves_requested_text(made: list[WaveRequest]) -> str:
    lines = [f"*{plural(len(made), 'request')} for approval*, each over a selection file in CSB's shape:"]
    lines += [f"• #{m.request_id}: {_wave_line(m.wave)}, {code(m.selection_file)}" for m in made]
    return "\n".join(lines)


def coverage_buttons(offers: list[tuple[CoverageArgs, str]]) -> tuple[str, list[Block]]:
    """`Fill gaps` and `Plan variance` under the answer, each `(the question it repeats, its value)`;
    the waves are counted again at the click, so an answer read late still asks for what is missing."""
    elements = [
        ButtonElement(
            text="Fill gaps" if args.fill else "Plan variance",
            action_id=ActionId.FILL_GAPS if args.fill else ActionId.PLAN_VARIANCE,
            value=value,
        )
        for args, value in offers
    ]
    text = (
        "Request runs of what is missing, each wave through the approval card: *Fill gaps* for the "
        "tasks with no valid run on a lane, *Plan variance* for CSB's waves to the target. "
        "Counted again when you click."
    )
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=text)), ActionsBlock(elements=elements)]
    return text, blocks
