"""The steps of an approved promotion over the checkout, each a blocking call the engine runs in a thread.

The file steps are `steps.py`'s (each safe to run again); around them the checkout's own scripts where it
has them, as `promote_run.py --execute` calls them: `extract_task_metrics.py` for trials without
`task_metrics.json` (before the move), `generate_manifest.py` (else the bot's writer of its rules, and the
journal says which), `export_official_results.py` once the MANIFEST was written,
`validate_official_integrity.py`; then the MANIFEST written is compared with the diff the card showed. A
step whose script the checkout lacks is `Skipped`, saying which. A run of several folders (one per suite)
is one promotion: `settle_all` finishes every folder once any of them was moved, and undoes every one
otherwise, so it is never half official.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from threading import Event

from bot.csb.checkout_script import run_script
from bot.csb.child_env import ChildEnv
from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.csb.promotion import steps
from bot.csb.promotion.layout import (
    MANIFEST_NAME,
    OFFICIAL,
    RESULT,
    STAGING,
    TASK_METRICS,
    config_folders,
    official_runs_dir,
    promote_task_dirs,
    suite_of,
)
from bot.csb.promotion.manifest_check import differences
from bot.csb.promotion.manifest_file import ManifestUnreadable, read_manifest
from bot.csb.promotion.quarantine import trials_to_move
from bot.csb.promotion.steps import Plan, Settled
from bot.csb.promotion.triage import triage_record
from bot.domain.promotion import ManifestDiff, PromotionPreview

EXTRACT_SCRIPTS = ("scripts/running/extract_task_metrics.py", "scripts/extract_task_metrics.py")
MANIFEST_SCRIPTS = ("scripts/maintenance/generate_manifest.py", "scripts/generate_manifest.py")
VALIDATE_SCRIPT = "scripts/validate_official_integrity.py"
EXPORT_SCRIPT = "scripts/analysis/export_official_results.py"
EXPORT_DIR = "docs/official_results"  # promote_run.py's --output-dir
EXPORT_DATA = "data/official_results.json"  # what the export writes under it, read back
SELECTED_TASKS = "configs/selected_benchmark_tasks.json"
# promote_run.py's (the export's 1200 s included), and a margin for the integrity check
_TIMEOUTS = {"extract": 120, "manifest": 120, "export": 1200, "validate": 300}
_TAIL = 300
_EXPORT_LIMIT = 256 * MIB  # every official task with its trace summary: some MiB for CSB's 2,000 trials


class StepFailed(Exception):
    """A step could not do its work; the message (a fact, from the bot or a script's last line) is shown."""


class Stopped(StepFailed):
    """The step was stopped part way (its process must stop touching the checkout): no more of it runs,
    and nothing is settled by this process."""


@dataclass(frozen=True)
class Skipped:
    """A step the checkout has no script for: journalled skipped, with why."""

    why: str


def plan_promotion(
    repo: Path,
    preview: PromotionPreview,
    *,
    quarantine: bool,
    reviewers: list[str],
    now: datetime,
    force: bool,
) -> list[Plan]:
    """Every folder's paths, fixed at the claim: destination, quarantined trials, the triage record."""
    plans = []
    record = triage_record(forced=force, reviewed_at=now, reviewers=reviewers)
    for folder in preview.folders:
        if folder.destination is None:
            continue
        source = repo / STAGING / folder.folder
        chosen = trials_to_move(source, folder.quarantine) if quarantine and folder.quarantine else []
        plans.append(
            Plan(
                source=source,
                target=repo / folder.destination.path,
                official_runs=official_runs_dir(repo),
                manifest=repo / OFFICIAL / MANIFEST_NAME,
                quarantine=tuple(chosen),
                triage={key: str(value) for key, value in record.items()},
                stamp=now.strftime("%Y%m%dT%H%M%SZ"),
            )
        )
    return plans


def plans_json(plans: list[Plan]) -> str:
    return json.dumps(
        [{**asdict(plan), "quarantine": [str(p) for p in plan.quarantine]} for plan in plans],
        default=str,
    )


def plans_from_json(text: str) -> list[Plan]:
    return [
        Plan(
            source=Path(item["source"]),
            target=Path(item["target"]),
            official_runs=Path(item["official_runs"]),
            manifest=Path(item["manifest"]),
            quarantine=tuple(Path(p) for p in item["quarantine"]),
            triage=dict(item["triage"]),
            stamp=item["stamp"],
        )
        for item in json.loads(text)
    ]


def extract(repo: Path, plans: list[Plan], env: ChildEnv, stop: Event | None = None) -> str:
    """`extract_task_metrics.py` on each trial with a result.json and no task_metrics.json."""
    script = next((s for s in EXTRACT_SCRIPTS if (repo / s).is_file()), None)
    missing = [
        (plan, config.name, task)
        for plan in plans
        for config in config_folders(plan.source)
        for task in promote_task_dirs(config)
        if (task / RESULT).is_file() and not (task / TASK_METRICS).is_file()
    ]
    if not missing:
        return "every trial has its task_metrics.json"
    if script is None:
        raise StepFailed(
            f"{len(missing)} trials lack task_metrics.json and the checkout has no extract script"
        )
    for plan, config, task in missing:
        _go_on(stop)
        argv = [
            "python3",
            script,
            "--task-dir",
            str(task),
            "--benchmark",
            suite_of(plan.source.name) or "",
            "--config",
            config,
        ]
        if (repo / SELECTED_TASKS).is_file():
            argv += ["--selected-tasks", SELECTED_TASKS]
        _run(repo, argv, env, "extract", stop)
    return f"{script} wrote {len(missing)} task_metrics.json"


def quarantine(plans: list[Plan], stop: Event | None = None) -> str:
    for plan in plans:
        _go_on(stop)
        steps.quarantine(plan)
    moved = sum(len(plan.quarantine) for plan in plans)
    return f"{moved} trials set aside" if moved else "nothing chosen"


def triage(plans: list[Plan], stop: Event | None = None) -> str:
    for plan in plans:
        _go_on(stop)
        steps.triage(plan)
    return f"triage.json written, reviewer {plans[0].triage['reviewer']}" if plans else "no folder"


def move(plans: list[Plan], stop: Event | None = None) -> str:
    for plan in plans:
        _go_on(stop)
        steps.move(plan)
    return ", ".join(str(plan.target.relative_to(_checkout_of(plan))) for plan in plans)


def _checkout_of(plan: Plan) -> Path:
    """The checkout root a plan's staging folder (`<root>/runs/staging/<run>`) sits under."""
    return plan.source.parent.parent.parent


def manifest(repo: Path, plans: list[Plan], env: ChildEnv, now: datetime, stop: Event | None = None) -> str:
    """The checkout's generate_manifest.py when it has one; else the bot's writer, and the note says so."""
    script = next((s for s in MANIFEST_SCRIPTS if (repo / s).is_file()), None)
    if script is not None:
        _run(repo, ["python3", script], env, "manifest", stop)
        return f"written by the checkout's {script}"
    _go_on(stop)
    steps.regenerate(plans[0], now)
    return (
        "written by the bot's writer of generate_manifest.py's rules "
        "(the checkout has no generate_manifest.py)"
    )


def export(repo: Path, env: ChildEnv, stop: Event | None = None) -> str | Skipped:
    """`export_official_results.py` over the official runs, as promote_run.py runs it once the MANIFEST
    was regenerated; its bundle's `data/official_results.json` is read back, not its exit code alone."""
    if not (repo / EXPORT_SCRIPT).is_file():
        return Skipped(f"the checkout has no {EXPORT_SCRIPT}")
    argv = ["python3", EXPORT_SCRIPT, "--runs-dir", OFFICIAL, "--output-dir", EXPORT_DIR]
    _run(repo, argv, env, "export", stop)
    written = f"{EXPORT_DIR}/{EXPORT_DATA}"
    try:
        data = read_json(repo / written, _EXPORT_LIMIT)
    except FileNotFoundError:
        raise StepFailed(f"{Path(EXPORT_SCRIPT).name} exited 0 but wrote no {written}") from None
    except (OSError, UnreadableJson) as exc:
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise StepFailed(f"{Path(EXPORT_SCRIPT).name} exited 0 but {written} cannot be read: {why}") from None
    counts = data if isinstance(data, dict) else {}
    runs, tasks = counts.get("run_count"), counts.get("task_count")
    if not isinstance(runs, int) or not isinstance(tasks, int):
        raise StepFailed(f"{Path(EXPORT_SCRIPT).name} exited 0 but {written} has no run and task counts")
    excluded = counts.get("excluded_task_count")
    dropped = f", {excluded} excluded" if isinstance(excluded, int) and excluded else ""
    return f"{EXPORT_DIR} written: {runs} runs, {tasks} tasks{dropped}"


def validate(repo: Path, env: ChildEnv, stop: Event | None = None) -> str | Skipped:
    """`validate_official_integrity.py --format json`, when the checkout has it."""
    if not (repo / VALIDATE_SCRIPT).is_file():
        return Skipped(f"the checkout has no {VALIDATE_SCRIPT}")
    argv = ["python3", VALIDATE_SCRIPT, "--runs-dir", OFFICIAL, "--format", "json"]
    _run(repo, argv, env, "validate", stop)
    return "validate_official_integrity.py: ok"


def compare(repo: Path, diff: ManifestDiff) -> list[str]:
    """Each place where the MANIFEST written says other than the diff shown, in words of facts."""
    try:
        written = read_manifest(repo / OFFICIAL / MANIFEST_NAME)
    except ManifestUnreadable as exc:
        return [f"the MANIFEST written cannot be read: {exc}"]
    if written is None:
        return ["no MANIFEST was written"]
    return [
        f"{d.key}{' ' + d.task if d.task else ''}: shown {d.expected}, written {d.found}"
        for d in differences(written, diff)
    ]


def settle_all(plans: list[Plan], now: datetime) -> Settled:
    """An interrupted or failed promotion made consistent: finished when any folder reached official
    (the others are moved too, their triage written first), else undone."""
    if any(plan.target.is_dir() and not plan.source.exists() for plan in plans):
        for plan in plans:
            if plan.source.is_dir():
                steps.triage(plan)
                steps.move(plan)
        return steps.settle(plans[0], now) if plans else Settled.FINISHED
    outcomes = {steps.settle(plan, now) for plan in plans}
    return Settled.LOST if Settled.LOST in outcomes else Settled.UNDONE


def _run(repo: Path, argv: list[str], env: ChildEnv, what: str, stop: Event | None) -> None:
    ran = run_script(repo, argv, env, timeout=_TIMEOUTS[what], tail=_TAIL, stop=stop)
    _go_on(stop)  # stopped while it ran: it was killed
    if ran.code is None:
        raise StepFailed(f"{Path(argv[1]).name} could not be run: {ran.last}")
    if ran.code != 0:
        raise StepFailed(f"{Path(argv[1]).name} exited {ran.code}: {ran.last}")


def _go_on(stop: Event | None) -> None:
    if stop is not None and stop.is_set():
        raise Stopped("stopped part way: this bot process no longer holds the timer lease")
