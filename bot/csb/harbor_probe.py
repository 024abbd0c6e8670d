"""Which Harbor the bot would run, and whether it takes the bot's lane command, asked without running a trial.

`harbor --version` names the version. Harbor 0.25 and later have `harbor run … --print-config`, which parses
the whole command line, resolves the job and prints it without starting anything: the bot's lane command for
the checkout's first task, with the lane's environment, must pass it. A Harbor without that flag (older ones,
or the example bench's stand-in) cannot be asked, and the check says so rather than guess.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.csb.child_env import ChildEnv, spawn_env
from bot.csb.harbor_run import LaunchConfig, job_name, lane_argv
from bot.csb.lane_env import batch_env

PRINT_CONFIG = "--print-config"
LINT_RULE = "invalid-task-config"  # `harbor lint`'s rule for a task.toml Harbor cannot load
PROBE_TIMEOUT_SEC = 60  # Harbor imports for a few seconds; a loaded machine makes it longer
PROBE_JOBS_DIR = "runs/csb-bot-check"  # named in the printed config only: --print-config writes nothing
_SHOWN_CHARS = 300


@dataclass(frozen=True)
class HarborProbe:
    """`notes` say what was found; `problems` are why a lane would not start; `skipped`, what this
    Harbor could not be asked."""

    notes: list[str]
    problems: list[str]
    skipped: list[str] = field(default_factory=list)


def probe_harbor(launch: LaunchConfig, task_path: str | None) -> HarborProbe:
    """Ask the deployment's Harbor its version, then (when it can) whether it accepts the lane command
    the engine would run for `task_path` (`lane_argv`, with this deployment's environment)."""
    harbor, repo, environ = launch.harbor, launch.repo, launch.base_env
    version = _run([harbor, "--version"], repo, environ)
    found = version.stdout.strip() if version.returncode == 0 else ""
    notes = [f"harbor {found}: {harbor}"] if found else []
    skipped = [] if found else [f"harbor of unknown version (no --version: not Harbor itself?): {harbor}"]
    if task_path is None:
        return HarborProbe(notes, [], skipped)
    help_text = _run([harbor, "run", "--help"], repo, environ)
    if PRINT_CONFIG not in help_text.stdout:
        skipped.append(f"lane command not checked: this harbor has no `run {PRINT_CONFIG}`")
        return HarborProbe(notes, [], skipped)
    job = job_name(0, 0, 0)
    argv = [*lane_argv(launch, task_path, "anthropic/claude-check", PROBE_JOBS_DIR, job, {}), PRINT_CONFIG]
    result = _run(argv, repo, batch_env(environ, repo, {}).with_vars({"BASELINE_MCP_TYPE": "none"}))
    if result.returncode != 0:
        output = " ".join((result.stderr or result.stdout).split())[-_SHOWN_CHARS:]
        problem = f"harbor refuses the lane command (exit {result.returncode}): {output}"
        return HarborProbe(notes, [problem], skipped)
    notes.append(f"harbor accepts the lane command (`harbor run … {PRINT_CONFIG}` on {task_path})")
    return HarborProbe(notes, [], skipped)


def _run(argv: list[str], repo: Path, env: ChildEnv) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=repo if repo.is_dir() else None,  # a missing checkout is its own problem, not Harbor's
            env=spawn_env(env),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", str(exc))


def lint_tasks(launch: LaunchConfig, task_paths: Sequence[str]) -> HarborProbe:
    """Whether the deployment's Harbor can load these tasks' `task.toml` (Harbor 0.25 refuses one without
    `[task] name`, which `--print-config` does not notice: it does not load the task). Asked with
    `harbor lint --select invalid-task-config`; a Harbor without `lint` cannot be asked, and is not."""
    harbor, repo, environ = launch.harbor, launch.repo, launch.base_env
    if not task_paths:
        return HarborProbe([], [])
    help_text = _run([harbor, "--help"], repo, environ)
    if "lint" not in help_text.stdout:
        return HarborProbe([], [], ["task.toml files not checked: this harbor has no `lint`"])
    argv = [harbor, "lint", "--select", LINT_RULE, "--json", *task_paths]
    result = _run(argv, repo, environ)
    try:
        findings = json.loads(result.stdout) if result.stdout.strip() else []
    except json.JSONDecodeError:
        findings = None
    if not isinstance(findings, list) or (result.returncode != 0 and not findings):
        output = " ".join((result.stderr or result.stdout).split())[-_SHOWN_CHARS:]
        return HarborProbe([], [f"harbor lint failed (exit {result.returncode}): {output or 'no output'}"])
    problems = [_lint_line(repo, finding) for finding in findings if isinstance(finding, dict)]
    if problems:
        return HarborProbe([], problems)
    count = len(task_paths)
    return HarborProbe([f"harbor loads the task.toml of {count} sampled task{'s' if count != 1 else ''}"], [])


def _lint_line(repo: Path, finding: Mapping[str, object]) -> str:
    path = str(finding.get("path", "?"))
    with contextlib.suppress(ValueError):
        path = str(Path(path).relative_to(repo.resolve()))
    return f"harbor cannot load {path}: {finding.get('message', 'invalid task config')}"[:_SHOWN_CHARS]
