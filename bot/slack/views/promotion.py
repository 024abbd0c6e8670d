"""Words of `/csb promote <run>` (CSB's promotion dry run with its MANIFEST diff) and `/csb official`.

Each verdict is labelled with the CSB tool whose rule it is (promote_run.py's gates, generate_manifest.py's
MANIFEST, quarantine_invalid_tasks.py's rule), in that tool's own vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import Block, MarkdownTextObject, SectionBlock

from bot.domain.promotion import (
    ConfigFlags,
    EntryChange,
    FlagSource,
    FolderPreview,
    FolderRefusal,
    Gate,
    GateName,
    KeyChange,
    OfficialLine,
    PromotionPreview,
    RunSummary,
    TaskChange,
)
from bot.domain.words import plural
from bot.slack.views.format import SECTION_LIMIT, chunk_lines, code, shown

_REFUSALS = {
    FolderRefusal.OUT_OF_RUNS: "it leads out of the checkout's `runs/`",
    FolderRefusal.LINK: "it is a link, not a folder",
    FolderRefusal.MISSING: "it is not in runs/staging (deleted or moved?)",
}
CHANGES_SHOWN = 15  # task lines per kind of change; the rest are counted


def promotion_text(preview: PromotionPreview) -> list[str]:
    """The preview as replies of whole lines, in order."""
    verdict = "*BLOCKED*" if preview.blocked else "*READY*"
    lines = [
        f"*Promotion dry run* of run #{preview.run_id} to `runs/official` (nothing was moved): {verdict}",
        f"Gates of CSB's `promote_run.py` (warnings allowed: {preview.max_warnings}) · "
        f"shown state `{preview.digest}`",
    ]
    for folder in preview.folders:
        lines += _folder_lines(folder)
    if preview.manifest_problem:
        lines.append(f":x: {shown(preview.manifest_problem)}: nothing can be promoted until it is fixed")
    lines += _diff_lines(preview)
    return chunk_lines(lines)


def _folder_lines(folder: FolderPreview) -> list[str]:
    lines = [f"*{code(folder.folder)}*"]
    if folder.refusal:
        return [*lines, f":x: {_REFUSALS[folder.refusal]}: nothing will be moved"]
    if folder.destination is not None:
        target = folder.destination
        if target.collision:
            lines.append(f":x: `[FAIL] Already exists in official`: {code(target.path)}")
        else:
            lines.append(f"Goes to {code(target.path)}")
    lines += [f"      {flag_source_text(config)}" for config in folder.configs]
    if folder.gates is not None:
        lines += [_gate_line(gate) for gate in folder.gates.gates]
        for gate in folder.gates.failed:
            lines += [
                f"      {code(flag.task_id, 80)} {flag.rule} ({flag.severity}): {shown(flag.message, 120)}"
                for flag in gate.first
            ]
            if gate.first and gate.count > len(gate.first):
                lines.append(f"      … and {gate.count - len(gate.first)} more")
    if folder.quarantine:
        lines.append(
            f"Quarantine rule (`quarantine_invalid_tasks.py`, failed with 0 MCP calls) would set aside "
            f"{plural(len(folder.quarantine), 'task')}, every config of each:"
        )
        for candidate in folder.quarantine:
            note = (
                " (MCP calls unknown: no trace; CSB counts that as 0)" if candidate.mcp_calls is None else ""
            )
            label = (
                f" — CSB's quarantine_invalid_tasks.py does not check {code(candidate.config)} lanes; "
                "same rule applied"
                if candidate.extended
                else ""
            )
            lines.append(f"      {code(candidate.task, 80)} in {code(candidate.config)}{note}{label}")
    return lines


def _gate_line(gate: Gate) -> str:
    mark = ":x:" if gate.failed else ":white_check_mark:"
    return f"{mark} {_gate_words(gate)}"


def _gate_words(gate: Gate) -> str:
    match gate.name:
        case GateName.VALIDATION_ERROR:
            return f"Validation error: {shown(gate.detail)}" if gate.failed else "Validated"
        case GateName.NO_TASKS:
            return "No task directories found" if gate.failed else "Has task directories"
        case GateName.CRITICALS:
            return f"{plural(gate.count, 'critical issue')} found"
        case GateName.MISSING_RESULTS:
            return f"{plural(gate.count, 'task')} missing result.json ({gate.detail} have one)"
        case GateName.WARNINGS:
            return f"{plural(gate.count, 'warning')} (more than {gate.limit} blocks)"
        case GateName.METRICS_EXTRACTION:
            if gate.failed:
                return f"{plural(gate.count, 'task')} without task_metrics.json, and {shown(gate.detail)}"
            writes = "extract_task_metrics.py writes them"
            return f"{plural(gate.count, 'task')} without task_metrics.json ({writes})"


def flag_source_text(config: ConfigFlags) -> str:
    """Where a config's counts came from (a reused flagged_tasks.json with its age)."""
    if config.source is FlagSource.REUSED:
        hours = (config.age_seconds or 0) / 3600
        return f"{code(config.config)}: flagged_tasks.json reused, written {hours:.1f} h ago"
    return f"{code(config.config)}: no flagged_tasks.json, validate_task_run.py's rules applied by the bot"


def _diff_lines(preview: PromotionPreview) -> list[str]:
    diff = preview.diff
    before = (
        "no MANIFEST yet"
        if preview.manifest_entries is None
        else f"{preview.manifest_entries} official tasks now"
    )
    lines = [
        f"*MANIFEST diff* (generate_manifest.py's rules, {before}): "
        f"{len(diff.of(EntryChange.ADDED))} added · {len(diff.of(EntryChange.REPLACED))} replaced · "
        f"{len(diff.of(EntryChange.KEPT))} kept"
    ]
    for change in (EntryChange.REPLACED, EntryChange.KEPT, EntryChange.ADDED):
        items = diff.of(change)
        lines += [_change_line(item) for item in items[:CHANGES_SHOWN]]
        if len(items) > CHANGES_SHOWN:
            lines.append(f"      … and {len(items) - CHANGES_SHOWN} more {change.value}")
    lines += [_key_line(key) for key in diff.keys]
    return lines


def _change_line(item: TaskChange) -> str:
    old = f"{item.before.status} {item.before.reward:.2f}" if item.before else ""
    new = f"{item.after.status} {item.after.reward:.2f}" if item.after else ""
    where = f"{code(item.key, 80)} {code(item.task, 80)}"
    if item.change is EntryChange.ADDED:
        return f"      added {where}: {new}"
    if item.change is EntryChange.KEPT:
        return (
            f"      kept {where}: {old} stays; the promoted {new} has no agent output "
            f"(zero-token results never overwrite)"
        )
    trend = {True: "better", False: "worse", None: "same reward"}[item.better]
    return f"      replaced {where}: {old} → {new} ({trend})"


def _figures(summary: RunSummary | None) -> str:
    if summary is None or summary.pass_rate is None:
        return "none"
    rate = f"{summary.passed}/{summary.task_count} passed ({summary.pass_rate:.1%})"
    return f"{rate}, mean reward {summary.mean_reward:.3f}"


def _key_line(key: KeyChange) -> str:
    return f"{code(key.key, 80)}: {_figures(key.before)} → {_figures(key.after)}"


def official_text(lines: list[OfficialLine], suite: str | None) -> list[str]:
    """`/csb official [suite]`: the MANIFEST's `runs` per suite and config."""
    scope = f"suite {code(suite)}" if suite else "every suite"
    out = [f"*Official results* (runs/official/MANIFEST.json, {scope}):"]
    current = None
    for line in lines:
        if line.suite != current:
            current = line.suite
            out.append(f"*{code(line.suite)}*")
        out.append(
            f"      {code(line.config)}: {_figures(line.figures)}, "
            f"{plural(line.figures.errored, 'errored task')} · {code(line.model)} · "
            f"{shown(line.timestamp or 'no timestamp')}"
        )
        if line.last_run_dir:
            review = (
                f"approved by {shown(line.reviewer, 120)} at {shown(line.reviewed_at or '', 60)} (triage)"
                if line.reviewer
                else "no triage.json says who approved it"
            )
            out.append(f"            last promoted: {code(line.last_run_dir)}, {review}")
    if not lines:
        out.append("The MANIFEST lists no official runs.")
    return chunk_lines(out)


HOME_TITLE = "*Official results* (runs/official/MANIFEST.json)"


def manifest_blocks(lines: Sequence[OfficialLine] | None, problem: str | None) -> list[Block]:
    """App Home's section of the MANIFEST: one line per suite and config, as many as fit one section."""
    if problem:
        text = f"{HOME_TITLE}\n:x: {shown(problem)}"
    elif lines is None:
        text = f"{HOME_TITLE}\nNo MANIFEST yet: nothing has been promoted."
    elif not lines:
        text = f"{HOME_TITLE}\nThe MANIFEST lists no official runs."
    else:
        rows = [_home_line(line) for line in lines]
        kept: list[str] = []
        for index, row in enumerate(rows):
            if len(HOME_TITLE) + sum(len(k) + 1 for k in kept) + len(row) + 60 > SECTION_LIMIT:
                kept.append(f"… and {len(rows) - index} more: `/csb official`")
                break
            kept.append(row)
        text = "\n".join([HOME_TITLE, *kept])
    return [SectionBlock(text=MarkdownTextObject(text=text))]


def _home_line(line: OfficialLine) -> str:
    by = f" · approved by {shown(line.reviewer, 80)}" if line.reviewer else ""
    return f"• {code(f'{line.suite}/{line.config}', 100)}: {_figures(line.figures)}{by}"
