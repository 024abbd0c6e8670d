"""CSB's after-batch scripts, run as its harness runs them once every lane of a batch has ended.

Per suite and lane config: `extract_task_metrics.py` on every trial folder with a `result.json` and no
`task_metrics.json` yet, then `validate_task_run.py --jobs-dir <config dir> --config <config>`, whose
`flagged_tasks.json` says what it found. Either script is skipped when the checkout lacks it; a script
that fails is reported, never fatal (the harness only warns). Blocking; callers run it in a thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.csb.checkout_script import run_script
from bot.csb.child_env import ChildEnv
from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.domain.events import AfterBatchRan
from bot.domain.mrkdwn import clip
from bot.domain.redact import Redactor

# The harness calls scripts/evaluation/…; older checkouts keep it at scripts/.
METRICS_SCRIPTS = ("scripts/evaluation/extract_task_metrics.py", "scripts/extract_task_metrics.py")
VALIDATE_SCRIPT = "scripts/authoring/validate_task_run.py"
FLAGGED_FILE = "flagged_tasks.json"
_TIMEOUT_SEC = 600
_TAIL = 200
_SHOWN = 600  # one finding or problem line in the thread
_REPORT_LIMIT = 16 * MIB  # the flag file of a run of 264 tasks is some 100 KiB


@dataclass(frozen=True)
class LaneFolder:
    """One lane config's jobs dir of one suite's run folder, relative to the checkout."""

    suite: str
    config: str
    jobs_dir: str


@dataclass
class AfterBatch:
    """What the scripts did: metrics written, validation findings per config, and failures."""

    metrics_written: int = 0
    metrics_failed: int = 0
    ran: bool = False
    findings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def event(self, redact: Redactor) -> AfterBatchRan | None:
        """What the run's thread is told; None when the checkout has neither script. What the scripts
        wrote (flag texts, a failing script's last line) is redacted and clipped here; the view escapes it."""
        if not self.ran:
            return None
        return AfterBatchRan(
            metrics_written=self.metrics_written,
            metrics_failed=self.metrics_failed,
            findings=tuple(clip(redact(finding), _SHOWN) for finding in self.findings),
            problems=tuple(clip(redact(problem), _SHOWN) for problem in self.problems),
        )


def run_after_batch(
    repo: Path,
    folders: Sequence[LaneFolder],
    task_file: str,
    env: ChildEnv,
    *,
    python: str = "python3",
) -> AfterBatch:
    report = AfterBatch()
    metrics = next((script for script in METRICS_SCRIPTS if (repo / script).is_file()), None)
    validate = (repo / VALIDATE_SCRIPT).is_file()
    report.ran = metrics is not None or validate
    for folder in folders:
        if metrics is not None:
            _metrics(repo, folder, metrics, task_file, env, python, report)
        if validate:
            _validate(repo, folder, env, python, report)
    return report


def _metrics(
    repo: Path,
    folder: LaneFolder,
    script: str,
    task_file: str,
    env: ChildEnv,
    python: str,
    report: AfterBatch,
) -> None:
    for trial in sorted((repo / folder.jobs_dir).glob("*/*/")):
        if not (trial / "result.json").is_file() or (trial / "task_metrics.json").exists():
            continue
        argv = [
            python,
            script,
            "--task-dir",
            f"{trial}/",
            "--benchmark",
            folder.suite,
            "--config",
            folder.config,
        ]
        argv += ["--selected-tasks", task_file]
        code, output = _run(repo, argv, env)
        if code == 0:
            report.metrics_written += 1
        else:
            report.metrics_failed += 1
            report.problems.append(f"extract_task_metrics failed for {trial.name}: {output}")


def _validate(repo: Path, folder: LaneFolder, env: ChildEnv, python: str, report: AfterBatch) -> None:
    jobs = repo / folder.jobs_dir
    code, output = _run(
        repo, [python, VALIDATE_SCRIPT, "--jobs-dir", str(jobs), "--config", folder.config], env
    )
    flagged = _read(jobs / FLAGGED_FILE)
    if flagged is None:
        if code not in (0, 1, 2):  # 1 and 2 are its verdicts (critical, warnings), not failures
            report.problems.append(f"validate_task_run failed for {folder.suite}/{folder.config}: {output}")
        return
    report.findings.append(f"`{folder.suite}/{folder.config}`: {_describe(flagged)}")


def _describe(flagged: Mapping[str, Any]) -> str:
    checked = flagged.get("tasks_checked")
    counts, flags = flagged.get("counts"), flagged.get("flags")
    counts = counts if isinstance(counts, dict) else {}
    flags = flags if isinstance(flags, list) else []
    parts = [f"{checked} checked" if isinstance(checked, int) else "checked"]
    parts += [f"{value} {key}" for key, value in counts.items() if isinstance(value, int) and value]
    shown = []
    for flag in flags[:3]:
        if isinstance(flag, dict):
            task = flag.get("task_name") or flag.get("task") or "?"
            what = (
                flag.get("flag")
                or flag.get("type")
                or flag.get("reason")
                or flag.get("severity")
                or "flagged"
            )
            shown.append(f"{task} ({what})")
    if shown:
        more = f" and {len(flags) - 3} more" if len(flags) > 3 else ""
        parts.append("flagged: " + ", ".join(shown) + more)
    return ", ".join(parts)


def _run(repo: Path, argv: list[str], env: ChildEnv) -> tuple[int, str]:
    ran = run_script(repo, argv, env, timeout=_TIMEOUT_SEC, tail=_TAIL)
    return (-1 if ran.code is None else ran.code), ran.last


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = read_json(path, _REPORT_LIMIT)  # a regular file, capped: the scripts write it in the run
    except (OSError, UnreadableJson):
        return None
    return data if isinstance(data, dict) else None
