"""Small CSB-shaped checkouts built in a temporary folder from the real CSB fixtures.

The fixtures are real CSB data files kept in `tests/fixtures/csb/`; `tests/fixtures/README.md` says where
each came from.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "csb"

SUITE_FIXTURE = "suite_csb-v2-dual264.truncated.json"
CGEN_SELECTION = "selection_cgen_rerun.json"
DEBUG_SELECTION = "selection_coverage_gap_csb_sdlc_debug__daytona__pass1__wave1__both.json"
TIDB_TOML = "task_csb_sdlc_debug_tidb-query-plan-regression-debug-001.toml"  # time_limit_sec = 1200
TELEPORT_TOML = "task_csb_sdlc_fix_teleport-users-can-delete-fix-001.toml"  # time_limit_sec = 900

CANONICAL = "benchmarks/suites/csb-v2-dual264.json"
CGEN_PATH = f"configs/{CGEN_SELECTION}"
DEBUG_PATH = f"configs/{DEBUG_SELECTION}"
CGEN_LEGACY_FOLDER = "benchmarks/csb_sdlc_build/cgen-deps-install-001"
DEBUG_FOLDER = "benchmarks/tasks/csb_sdlc_debug/linux-hda-intel-suspend-fault-001"


def fixture_json(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def put(root: Path, rel: str, fixture_name: str) -> Path:
    """Copy a fixture, byte for byte, to `rel` inside the tree."""
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / fixture_name, target)
    return target


def write_json(root: Path, rel: str, data: Any) -> Path:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return target


def add_task(root: Path, folder: str, toml_fixture: str = TIDB_TOML) -> Path:
    """A task folder with a real task.toml and the direct lanes' Dockerfiles (the base one and the MCP
    lane's `Dockerfile.sg_only`, which CSB's harness requires before it launches)."""
    put(root, f"{folder}/task.toml", toml_fixture)
    environment = root / folder / "environment"
    environment.mkdir(exist_ok=True)
    (environment / "Dockerfile").write_text("FROM python:3.11-slim\n")
    (environment / "Dockerfile.sg_only").write_text(
        'FROM python:3.11-slim\nENV SOURCEGRAPH_REPOS="sg-evals/x"\n'
    )
    return root / folder


def build_tree(root: Path, *, suite_file: str | None = CANONICAL, task_folders: bool = True) -> Path:
    """A checkout with the truncated canonical suite file, both selection files and the eval matrix.

    Every suite task gets `benchmarks/tasks/<task_dir>`; the cgen selection task lives in the legacy
    `benchmarks/<task_dir>` layout, the debug one in the current layout.
    """
    if suite_file is not None:
        put(root, suite_file, SUITE_FIXTURE)
    put(root, "configs/eval_matrix.json", "eval_matrix.json")
    put(root, CGEN_PATH, CGEN_SELECTION)
    put(root, DEBUG_PATH, DEBUG_SELECTION)
    if task_folders:
        for task in fixture_json(SUITE_FIXTURE)["tasks"]:
            add_task(root, f"benchmarks/tasks/{task['task_dir']}")
        add_task(root, CGEN_LEGACY_FOLDER, TELEPORT_TOML)
        add_task(root, DEBUG_FOLDER)
    return root
