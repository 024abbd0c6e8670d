"""`generate_manifest.py`'s rules over a tree of official run folders: the MANIFEST it would write.

Scan: run folders sorted by name, skipped names and unknown suite prefixes left out; each config folder's
trials (`scan_config_dir`), invalidated trials left out; the task key is the normalised task name; in one
config folder the later sorted trial wins. Across run folders, for the same `(suite, config, task)`: a
result with agent output beats one without, else the newer `started_at` (string compare, ties to the later
scan). Each decision against a candidate is kept, so a promotion can say which of its results stay out.
The per-task status is `bot.csb.verdicts.manifest_status` (the same rules, written once).

Where the bot's writer differs from the script, it says so: it reads `judge_result.json` beside a trial but
not a `--judge-scores` file, and not `trace_quality_metrics.json` (no `quality_flags`); it never filters
by `--selected-only` (the script's default here is off).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.csb.promotion.layout import RESULT, config_folders, manifest_trial_dirs, skipped, suite_of
from bot.csb.promotion.manifest_file import (
    DESCRIPTION,
    HistoryRun,
    Manifest,
    RunEntry,
    TaskEntry,
    TaskHistory,
)
from bot.csb.regular_file import open_regular
from bot.csb.trials import csb_task_name
from bot.csb.verdicts.bounded_read import Notes, read_object
from bot.csb.verdicts.lane_verdict import RESULT_LIMIT, is_trial_record
from bot.csb.verdicts.manifest_status import CRASH_MAX_LINES, manifest_status
from bot.domain.manifest_names import manifest_task_key
from bot.domain.verdict import ManifestStatus

TRANSCRIPT = Path("agent") / "claude-code.txt"
TRAJECTORY = Path("agent") / "trajectory.json"
JUDGE = "judge_result.json"


def normalise_task_name(name: str) -> str:
    """`_normalize_task_name`, the one MANIFEST task key (`bot/domain/manifest_names.py`)."""
    return manifest_task_key(name)


def has_agent_output(result: Mapping[str, Any]) -> bool:
    """`_has_agent_output`: both token counts null is *unknown*, counted as output; else either above 0."""
    agent = result.get("agent_result")
    agent = agent if isinstance(agent, Mapping) else {}
    n_in, n_out = _num(agent.get("n_input_tokens")), _num(agent.get("n_output_tokens"))
    if n_in is None and n_out is None:
        return True
    return (n_in or 0) > 0 or (n_out or 0) > 0


@dataclass(frozen=True)
class Trial:
    """One trial as the MANIFEST sees it."""

    suite: str
    config: str
    task: str
    run_dir: str  # the top-level run folder's name
    path: Path
    started_at: str
    has_output: bool
    entry: TaskEntry
    model: str | None
    in_history: bool  # `_is_valid_run`
    history: HistoryRun

    @property
    def key(self) -> str:
        return f"{self.suite}/{self.config}"


@dataclass(frozen=True)
class Decision:
    """A trial that lost its place to another, and why (`output`: the other had agent output, this none)."""

    loser: Trial
    winner: Trial
    output: bool


@dataclass
class Scan:
    latest: dict[str, dict[str, Trial]] = field(default_factory=dict)
    history: dict[str, dict[str, list[Trial]]] = field(default_factory=dict)
    decisions: list[Decision] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def scan(
    run_dirs: Iterable[tuple[str, Path]], cache: dict[tuple[str, Path], Trial | None] | None = None
) -> Scan:
    """The scan over `(name, folder)` pairs (the name is what the folder is called in the official
    tree: a run being promoted is scanned under its destination name before it moves). `cache` keeps
    each trial read, for a second scan of the same folders (a diff scans the official tree twice)."""
    result = Scan()
    cache = {} if cache is None else cache
    for name, folder in sorted(run_dirs, key=lambda item: item[0]):
        suite = suite_of(name)
        if skipped(name) or suite is None:
            continue
        for config_dir in config_folders(folder):
            in_config: dict[str, Trial] = {}
            for trial_dir in manifest_trial_dirs(config_dir):
                known = (name, trial_dir)
                if known not in cache:
                    cache[known] = read_trial(trial_dir, suite, config_dir.name, name, result.notes)
                trial = cache[known]
                if trial is None:
                    continue
                in_config[trial.task] = trial  # latest sorted entry wins within a config folder
                if trial.in_history:
                    result.history.setdefault(trial.key, {}).setdefault(trial.task, []).append(trial)
            _merge(result, in_config.values())
    return result


def _merge(result: Scan, trials: Iterable[Trial]) -> None:
    for new in trials:
        tasks = result.latest.setdefault(new.key, {})
        old = tasks.get(new.task)
        if old is None:
            tasks[new.task] = new
        elif new.has_output and not old.has_output:
            tasks[new.task] = new
            result.decisions.append(Decision(loser=old, winner=new, output=True))
        elif old.has_output and not new.has_output:
            result.decisions.append(Decision(loser=new, winner=old, output=True))
        elif new.started_at >= old.started_at:
            tasks[new.task] = new
            result.decisions.append(Decision(loser=old, winner=new, output=False))
        else:
            result.decisions.append(Decision(loser=new, winner=old, output=False))


def read_trial(trial_dir: Path, suite: str, config: str, run_dir: str, notes: list[str]) -> Trial | None:
    """The trial's MANIFEST view; None without a readable trial result.json (noted when unreadable)."""
    found = Notes()
    result = read_object(trial_dir / RESULT, found, limit=RESULT_LIMIT)
    if result is None or not is_trial_record(result):
        notes.extend(f"{run_dir}/{config}/{trial_dir.name}: {note}" for note in found.items)
        return None
    name = result.get("task_name")
    raw_name = name if isinstance(name, str) and name else csb_task_name(trial_dir.name)
    has_trajectory = (trial_dir / TRAJECTORY).is_file()
    verdict = manifest_status(
        result, has_trajectory=has_trajectory, transcript_lines=_lines(trial_dir / TRANSCRIPT), notes=found
    )
    agent = result.get("agent_result")
    agent = agent if isinstance(agent, Mapping) else {}
    entry: dict[str, Any] = {
        "status": verdict.status.value,
        "reward": round(verdict.reward, 4),
        "has_trajectory": has_trajectory,
        "has_cost": bool(_num(agent.get("n_input_tokens")) or _num(agent.get("n_output_tokens"))),
        **_judge(trial_dir, found),
    }
    if verdict.timed_out:
        entry["timed_out"] = True
        entry["timeout_seconds"] = verdict.timeout_seconds
    started = result.get("started_at")
    started_at = started if isinstance(started, str) else ""
    output = has_agent_output(result)
    reward = _reward(result)
    exception = result.get("exception_info") is not None
    notes.extend(f"{run_dir}/{config}/{trial_dir.name}: {note}" for note in found.items)
    return Trial(
        suite=suite,
        config=config,
        task=normalise_task_name(raw_name),
        run_dir=run_dir,
        path=trial_dir,
        started_at=started_at,
        has_output=output,
        entry=TaskEntry.model_validate(entry),
        model=_model(trial_dir, result, found),
        in_history=(reward or 0) > 0 if exception else output,
        history=HistoryRun(
            started_at=started_at,
            reward=reward or 0.0,
            status="passed" if (reward or 0) > 0 else "failed",
            is_paired=any(
                "paired_rerun" in part for part in (trial_dir.parent.name, *_parents(trial_dir, 2))
            ),
            run_dir=run_dir,
        ),
    )


def build_manifest(result: Scan, generated: datetime) -> Manifest:
    """The MANIFEST the scan makes: `runs` by sorted key, then `run_history`."""
    runs: dict[str, RunEntry] = {}
    for key in sorted(result.latest):
        trials = result.latest[key]
        if trials:
            runs[key] = run_entry(key, list(trials.values()))
    history = {
        key: {task: task_history(trials) for task, trials in sorted(tasks.items())}
        for key, tasks in sorted(result.history.items())
    }
    return Manifest(
        description=DESCRIPTION,
        generated=generated.isoformat(),
        total_tasks=sum(run.task_count for run in runs.values()),
        total_runs=len(runs),
        runs=runs,
        run_history=history,
    )


def run_entry(key: str, trials: list[Trial]) -> RunEntry:
    statuses = [trial.entry.status for trial in trials]
    errored = statuses.count(ManifestStatus.ERRORED.value)
    scored = [trial.entry.reward for trial in trials if trial.entry.status != ManifestStatus.ERRORED.value]
    judged = [trial.entry.judge_score for trial in trials if trial.entry.judge_score is not None]
    extra: dict[str, Any] = {}
    if judged:
        extra = {"mean_judge_score": round(sum(judged) / len(judged), 3), "judge_count": len(judged)}
    return RunEntry.model_validate(
        {
            "run_id": key.replace("/", "_"),
            "model": next((trial.model for trial in trials if trial.model), "unknown"),
            "timestamp": _stamp(trials[0].started_at),
            "task_count": len(trials),
            "passed": statuses.count(ManifestStatus.PASSED.value),
            "failed": statuses.count(ManifestStatus.FAILED.value),
            "errored": errored,
            "mean_reward": round(sum(scored) / len(scored), 3) if scored else 0.0,
            **extra,
            "tasks": {trial.task: trial.entry for trial in trials},
        }
    )


def task_history(trials: list[Trial]) -> TaskHistory:
    runs = sorted((trial.history for trial in trials), key=lambda run: run.started_at)
    rewards = [run.reward for run in runs]
    return TaskHistory(
        n_runs=len(runs),
        mean_reward=round(sum(rewards) / len(rewards), 4),
        std_reward=round(statistics.stdev(rewards), 4) if len(rewards) > 1 else 0.0,
        runs=runs,
    )


def _stamp(started_at: str) -> str:
    """The first task's `started_at` as `%Y-%m-%d %H-%M-%S` ("" when it has none)."""
    try:
        return datetime.fromisoformat(started_at.replace("Z", "+00:00")).strftime("%Y-%m-%d %H-%M-%S")
    except ValueError:
        return ""


def _model(trial_dir: Path, result: Mapping[str, Any], notes: Notes) -> str | None:
    """`config.json` `agent.model_name` → result.json `config.agent.model_name` → `agent_info…name`."""
    config = read_object(trial_dir / "config.json", notes, limit=RESULT_LIMIT) or {}
    for source, path in ((config, ("agent", "model_name")), (result, ("config", "agent", "model_name"))):
        value = _dig(source, path)
        if isinstance(value, str) and value:
            return value
    value = _dig(result, ("agent_info", "model_info", "name"))
    return value if isinstance(value, str) and value else None


def _judge(trial_dir: Path, notes: Notes) -> dict[str, Any]:
    data = read_object(trial_dir / JUDGE, notes, limit=RESULT_LIMIT) or {}
    provenance = data.get("provenance")
    return {
        "judge_score": _num(data.get("judge_score")),
        "judge_model": data.get("judge_model") if isinstance(data.get("judge_model"), str) else None,
        "judge_dimensions": data.get("rubric"),
        "judge_confidence": provenance.get("confidence") if isinstance(provenance, Mapping) else None,
    }


def _reward(result: Mapping[str, Any]) -> float | None:
    return _num(_dig(result, ("verifier_result", "rewards", "reward")))


def _lines(path: Path) -> int:
    """Lines of the transcript, counted only as far as the crash rule needs (missing: 0)."""
    try:
        handle = open_regular(path)
    except OSError:
        return 0
    lines = 0
    last = b""
    with handle:
        while lines <= CRASH_MAX_LINES:
            chunk = handle.read(64 * 1024)
            if not chunk:
                return lines + (1 if last and not last.endswith(b"\n") else 0)
            lines += chunk.count(b"\n")
            last = chunk
    return lines


def _parents(path: Path, levels: int) -> list[str]:
    return [parent.name for parent in list(path.parents)[1 : 1 + levels]]


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, Mapping):
            return None
        data = data.get(part)
    return data


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
