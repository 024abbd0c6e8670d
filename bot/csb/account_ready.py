"""CSB's account readiness filter: the homes `account_health.py preflight` calls ready.

CSB's harness runs it over the homes it found and keeps only the report's `ready_homes` (a home whose
token has under 90 minutes left, or that is held or busy, is not ready). Blocking; callers use a thread.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

from bot.csb.child_env import ChildEnv, spawn_env
from bot.domain.errors import InfraError

ACCOUNT_HEALTH_SCRIPT = "scripts/infra/account_health.py"
STATE_FILE = "runs/state/account_health.json"
SESSIONS_PER_ACCOUNT = 6
MIN_TOKEN_MINUTES = 90
_TIMEOUT_SEC = 60


def has_account_health(repo: Path) -> bool:
    return (repo / ACCOUNT_HEALTH_SCRIPT).is_file()


def ready_homes(
    repo: Path, homes: Sequence[str], real_home: str, env: ChildEnv, *, python: str = "python3"
) -> frozenset[str]:
    """The homes CSB's script calls ready, asked as the harness asks it; InfraError when it cannot say."""
    argv = [python, ACCOUNT_HEALTH_SCRIPT, "preflight", "--format", "json", "--state-file", STATE_FILE]
    argv += ["--real-home", real_home, "--sessions-per-account", str(SESSIONS_PER_ACCOUNT)]
    argv += ["--min-token-minutes", str(MIN_TOKEN_MINUTES)]
    for home in homes:
        argv += ["--home", home]
    try:
        done = subprocess.run(
            argv, cwd=repo, env=spawn_env(env), capture_output=True, timeout=_TIMEOUT_SEC, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InfraError(f"{ACCOUNT_HEALTH_SCRIPT} could not run: {exc}") from exc
    try:
        report = json.loads(done.stdout)
    except ValueError as exc:
        raise InfraError(f"{ACCOUNT_HEALTH_SCRIPT} printed no JSON report (exit {done.returncode})") from exc
    ready = report.get("ready_homes") if isinstance(report, dict) else None
    if not isinstance(ready, list):
        raise InfraError(f"{ACCOUNT_HEALTH_SCRIPT}'s report has no ready_homes list")
    return frozenset(str(home) for home in ready)
