"""The files coverage reads: the checkout's selection of tasks and the MANIFEST's `run_history`.

The selection is `configs/selected_benchmark_tasks.json`, the file CSB's `plan_variance_runs.py` reads;
a task marked `excluded` is left out, as CSB's coverage contract says (`docs/AGENT_OPERATIONS.md`), and a
task's suite is its `benchmark`, else its `mcp_suite` (the planner's rule). `run_history` is
`{"<suite>/<config>": {task: {"n_runs": N, ...}}}`, and it holds only the runs `generate_manifest.py`
counts as valid; keys that are not `suite/config` are ignored, as the planner ignores them. The history is
read without building a model of every run, so a MANIFEST of 10,000 tasks × 4 configs × 5 runs is read in
well under a second. Blocking I/O; callers run it in a thread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.csb.catalog import DEFAULT_SELECTION_FILE
from bot.csb.counterparts import MANIFEST_PATH, MANIFEST_SIZE_LIMIT
from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.domain.coverage import SelectedTask, Wave
from bot.domain.errors import UserInputError

SELECTION_SIZE_LIMIT = 32 * MIB  # as for any task file the bot reads

History = list[tuple[str, str, str, int]]  # (suite, config, task, valid runs)


@dataclass(frozen=True)
class OfficialHistory:
    rows: History
    run_dirs: frozenset[str]  # the run folders run_history's runs came from (a promoted run's among them)


@dataclass(frozen=True)
class Selection:
    path: str  # relative to the checkout
    tasks: tuple[SelectedTask, ...]  # not excluded, with a suite and an id
    entries: tuple[dict[str, Any], ...]  # every task object of the file, as it is (SelectedTask.index)
    excluded: int


def read_selection(repo: Path, rel_path: str = DEFAULT_SELECTION_FILE) -> Selection:
    """The selection's tasks; UserInputError (one line) when the file is missing or not a selection."""
    try:
        data = read_json(repo / rel_path, SELECTION_SIZE_LIMIT)
    except FileNotFoundError:
        raise UserInputError(f"the CSB checkout has no `{rel_path}`: coverage counts its tasks") from None
    except (OSError, UnreadableJson) as exc:
        raise UserInputError(f"`{rel_path}` cannot be read: {exc}") from None
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise UserInputError(f"`{rel_path}` has no `tasks` list; it is not a CSB selection file")
    tasks, excluded = [], 0
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise UserInputError(f"`{rel_path}`: task #{index + 1} is not an object")
        if entry.get("excluded") is True:
            excluded += 1
            continue
        suite = entry.get("benchmark") or entry.get("mcp_suite")
        task_id = entry.get("task_id")
        if isinstance(suite, str) and suite and isinstance(task_id, str) and task_id:
            tasks.append(SelectedTask(suite=suite, task_id=task_id, index=index))
    return Selection(rel_path, tuple(tasks), tuple(entries), excluded)


class NoManifest(LookupError):
    """The checkout has no MANIFEST yet: no official run, so no official coverage."""


def manifest_history(repo: Path) -> OfficialHistory:
    """`run_history` as rows; NoManifest when absent, UserInputError when it is not CSB's shape."""
    try:
        data = read_json(repo / MANIFEST_PATH, MANIFEST_SIZE_LIMIT)
    except FileNotFoundError:
        raise NoManifest(MANIFEST_PATH) from None
    except (OSError, UnreadableJson) as exc:
        raise UserInputError(f"`{MANIFEST_PATH}` cannot be read: {exc}") from None
    history = data.get("run_history", {}) if isinstance(data, dict) else None
    if not isinstance(history, dict):
        raise UserInputError(
            f"`{MANIFEST_PATH}` is not in generate_manifest.py's shape: no `run_history` object"
        )
    run_dirs: set[str] = set()
    return OfficialHistory(list(_rows(history, run_dirs)), frozenset(run_dirs))


def _rows(history: dict[str, Any], run_dirs: set[str]) -> Iterator[tuple[str, str, str, int]]:
    for key, tasks in history.items():
        parts = key.split("/")
        if len(parts) != 2:
            continue
        if not isinstance(tasks, dict):
            raise UserInputError(f"`{MANIFEST_PATH}`: run_history `{key[:80]}` is not an object of tasks")
        suite, config = parts
        for task, entry in tasks.items():
            runs = entry.get("n_runs", 0) if isinstance(entry, dict) else None
            if not isinstance(runs, int) or isinstance(runs, bool):
                raise UserInputError(
                    f"`{MANIFEST_PATH}`: run_history `{key[:80]}` task `{str(task)[:80]}` "
                    "has no whole `n_runs`"
                )
            for run in entry.get("runs", ()) if isinstance(entry.get("runs"), list) else ():
                if isinstance(run, dict) and isinstance(run.get("run_dir"), str):
                    run_dirs.add(run["run_dir"])
            yield suite, config, task, runs


# Where CSB puts these files: AGENT_OPERATIONS.md's gap-fill subset, plan_variance_runs.py's waves.
GAP_FILL_DIR = "configs/harnesses"
VARIANCE_DIR = "configs/variance_reruns"


def write_wave(repo: Path, selection: Selection, wave: Wave, folder: str, stem: str, description: str) -> str:
    """The wave's tasks as a selection file in CSB's shape, `{"metadata": {"description", "task_count"},
    "tasks": [...]}`, each task object copied from the selection as it is; written whole or not at all
    (a temporary file renamed); returns its path from the checkout root. The name carries the moment, so
    a file an earlier request pinned is never overwritten."""
    tasks = [selection.entries[task.index] for task in wave.tasks]
    return write_selection_file(repo, f"{folder}/{stem}.json", tasks, description)


def write_selection_file(repo: Path, rel: str, tasks: list[dict[str, Any]], description: str) -> str:
    """`tasks` as a selection file in CSB's shape at `rel` (from the checkout root), written whole or not
    at all (a temporary file renamed); returns `rel`."""
    data = {"metadata": {"description": description, "task_count": len(tasks)}, "tasks": tasks}
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.writing")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return rel


def stamp(at: datetime) -> str:
    return at.strftime("%Y%m%dT%H%M%S")
