"""Real Harbor for the end-to-end tests: the pinned Harbor of `make harbor`, running the example bench in its
host-root environment (a throwaway root per trial; it needs root).

`make test` passes the Harbor venv as CSB_TEST_HARBOR_VENV. Without it (or without root) the tests are
skipped, and under CI they fail instead, as the PostgreSQL tests do.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
from postgres_cluster import required

VENV_VARIABLE = "CSB_TEST_HARBOR_VENV"
HOST_ROOT_ENV = "harness.host_root:HostRootEnvironment"
TOOLS = ("unshare", "nsenter", "chroot", "mount", "tar", "setpriv")
# Tasks of the suite file the tests run: an easy one (both lanes pass) and the partial one (MCP 0.5).
TASKS = {
    "slugify-punctuation-fix-001": "csb_sdlc_fix",
    "config-merge-nested-fix-001": "csb_sdlc_fix",
}
SUITE_FILE = "benchmarks/suites/real-harbor.json"


def harbor_or_skip() -> Path:
    """The `harbor` of the pinned venv, or skip (fail under CI) saying why it cannot run here."""
    venv = os.environ.get(VENV_VARIABLE, "")
    harbor = Path(venv, "bin", "harbor") if venv else None
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if harbor is None:
        problem = f"{VENV_VARIABLE} is not set (make test sets it to the venv `make harbor` builds)"
    elif not harbor.is_file():
        problem = f"no Harbor at {harbor}: `make harbor` builds it (it needs Python 3.12 or newer)"
    elif os.geteuid() != 0:
        problem = "the host-root environment needs root"
    elif missing:
        problem = f"the host-root environment needs {', '.join(missing)}"
    else:
        return harbor
    if required():
        pytest.fail(f"CI runs the real-Harbor tests, and {problem}")
    pytest.skip(f"real Harbor: {problem}")


def select_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """What an operator exports to run the bench on real Harbor: HARBOR_ENV picks the environment class,
    and LiteLLM (imported by Harbor) reads its bundled price list instead of fetching one."""
    monkeypatch.setenv("HARBOR_ENV", HOST_ROOT_ENV)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def write_suite(repo: Path, chosen: Mapping[str, str] = TASKS) -> str:
    """A suite file of `chosen` (task id → suite) in the bench copy; returns its path in the checkout."""
    counts: dict[str, int] = {}
    for suite in chosen.values():
        counts[suite] = counts.get(suite, 0) + 1
    tasks = [
        {"task_id": task, "suite": suite, "task_dir": f"{suite}/{task}"} for task, suite in chosen.items()
    ]
    data = {"suite_id": "real-harbor", "suites": counts, "tasks": tasks}
    (repo / SUITE_FILE).write_text(json.dumps(data, indent=2))
    return SUITE_FILE
