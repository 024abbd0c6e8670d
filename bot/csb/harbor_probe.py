"""Which Harbor the bot would run, and whether it takes the bot's lane command, asked without running a trial.

`harbor --version` names the version. Harbor 0.25 and later have `harbor run … --print-config`, which parses
the whole command line, resolves the job and prints it without starting anything: the bot's lane command for
the checkout's first task, with the lane's environment, must pass it. A Harbor without that flag (older ones,
or the example bench's stand-in) cannot be asked, and the check says so rather than guess.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from bot.csb.child_env import ChildEnv, spawn_env
from bot.csb.command import LaunchConfig, job_name, lane_argv
from bot.csb.lane_env import batch_env

PRINT_CONFIG = "--print-config"
PROBE_TIMEOUT_SEC = 60  # Harbor imports for a few seconds; a loaded machine makes it longer
PROBE_JOBS_DIR = "runs/csb-bot-check"  # named in the printed config only: --print-config writes nothing
_SHOWN_CHARS = 300


@dataclass(frozen=True)
class HarborProbe:
    """`notes` say what was found; `problems` are why a lane would not start."""

    notes: list[str]
    problems: list[str]


def probe_harbor(launch: LaunchConfig, task_path: str | None) -> HarborProbe:
    """Ask the deployment's Harbor its version, then (when it can) whether it accepts the lane command
    the engine would run for `task_path` (`lane_argv`, with this deployment's environment)."""
    harbor, repo, environ = launch.harbor, launch.repo, launch.base_env
    version = _run([harbor, "--version"], repo, environ)
    found = version.stdout.strip() if version.returncode == 0 else ""
    notes = [f"harbor {found or 'of unknown version (no --version: not Harbor itself?)'}: {harbor}"]
    if task_path is None:
        return HarborProbe(notes, [])
    help_text = _run([harbor, "run", "--help"], repo, environ)
    if PRINT_CONFIG not in help_text.stdout:
        notes.append(f"lane command not checked: this harbor has no `run {PRINT_CONFIG}`")
        return HarborProbe(notes, [])
    job = job_name(0, 0, 0)
    argv = [*lane_argv(launch, task_path, "anthropic/claude-check", PROBE_JOBS_DIR, job, {}), PRINT_CONFIG]
    result = _run(argv, repo, batch_env(environ, repo, {}).with_vars({"BASELINE_MCP_TYPE": "none"}))
    if result.returncode != 0:
        output = " ".join((result.stderr or result.stdout).split())[-_SHOWN_CHARS:]
        return HarborProbe(notes, [f"harbor refuses the lane command (exit {result.returncode}): {output}"])
    notes.append(f"harbor accepts the lane command (`harbor run … {PRINT_CONFIG}` on {task_path})")
    return HarborProbe(notes, [])


def _run(argv: list[str], repo: Path, env: ChildEnv) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            cwd=repo,
            env=spawn_env(env),
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SEC,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", str(exc))
