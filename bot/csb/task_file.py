"""Parse a CSB task file, in either of its two shapes, into one `TaskFile`.

Suite files (`benchmarks/suites/<id>.json`) carry `suites: {key: count}` and tasks with `suite`; selection
files (the older `configs/*.json` shape) carry tasks with `benchmark`/`suite`/`mcp_suite`. Both become task
refs located in the checkout, so nothing downstream knows which shape it came from.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.csb.json_file import UnreadableJson, parse_json
from bot.csb.regular_file import read_capped
from bot.domain.errors import UserInputError
from bot.domain.mrkdwn import clip
from bot.domain.spec import TaskRef

Shape = Literal["suite", "selection"]

TASK_ID_LIMIT = 128  # CSB's ids are under 80 characters; one is a folder name, so it is kept short
TASK_DIR_LIMIT = 512
TASK_TOML_SIZE_LIMIT = 1024 * 1024  # CSB's task.tomls are under 2 KiB
_SHOWN_LIMIT = 80
_ENTRY_HINT = "fix that entry of the task file, or choose another with --suite-file"

# Where a task's suite key lives, in order of preference, per shape.
_SUITE_FIELDS: Mapping[Shape, tuple[str, ...]] = {
    "suite": ("suite", "benchmark", "mcp_suite"),
    "selection": ("benchmark", "suite", "mcp_suite"),
}


class TaskFile(BaseModel):
    """One parsed task file; `sha256` is over its bytes so an approval pins exactly what was read."""

    model_config = ConfigDict(frozen=True)

    path: str  # relative to the checkout root
    sha256: str
    suites: dict[str, int]  # suite key → number of tasks of that suite in this file
    tasks: tuple[TaskRef, ...]
    shape: Shape


def parse_task_file(repo: Path, rel_path: str, raw: bytes) -> TaskFile:
    """Parse the bytes of `rel_path`; task folders are located (and task.toml read) under `repo`."""
    data = _decode(rel_path, raw)
    shape: Shape = "suite" if isinstance(data.get("suites"), dict) or "suite_id" in data else "selection"
    entries = data.get("tasks")
    if not isinstance(entries, list):
        raise UserInputError(f"`{rel_path}` has no `tasks` list; it is not a CSB suite or selection file")
    refs = (_task_ref(repo, rel_path, index, entry, shape) for index, entry in enumerate(entries))
    tasks = tuple(ref for ref in refs if ref is not None)
    return TaskFile(
        path=rel_path,
        sha256=hashlib.sha256(raw).hexdigest(),
        suites=_suite_counts(data, shape, tasks),
        tasks=tasks,
        shape=shape,
    )


def task_folder(repo: Path, task_dir: str) -> str:
    """`benchmarks/tasks/<task_dir>`, or the older `benchmarks/<task_dir>` when only that exists.

    A folder that exists in neither place is reported under the current layout, so the
    missing-folder check names where it should be.
    """
    current, legacy = f"benchmarks/tasks/{task_dir}", f"benchmarks/{task_dir}"
    if not (repo / current).is_dir() and (repo / legacy).is_dir():
        return legacy
    return current


def _decode(rel_path: str, raw: bytes) -> dict[str, Any]:
    try:
        data = parse_json(raw)
    except UnreadableJson as exc:
        raise UserInputError(f"`{rel_path}` {exc}") from exc
    if not isinstance(data, dict):
        raise UserInputError(f"`{rel_path}` is not a JSON object; it is not a CSB suite or selection file")
    return data


def _task_ref(repo: Path, rel_path: str, index: int, entry: Any, shape: Shape) -> TaskRef | None:
    """One task, or None for an entry with no suite (CSB's harness skips those too)."""
    task_id = entry.get("task_id") if isinstance(entry, dict) else None
    if not isinstance(task_id, str) or not task_id:
        raise UserInputError(f"`{rel_path}`: task #{index + 1} has no `task_id`")
    where = f"`{rel_path}`: task #{index + 1}"
    problem = task_id_problem(task_id)
    if problem:
        raise UserInputError(
            f"{where} has an unusable task_id {_shown(task_id)}: {problem}", hint=_ENTRY_HINT
        )
    suite = next((entry[key] for key in _SUITE_FIELDS[shape] if isinstance(entry.get(key), str)), "")
    if not suite:
        return None
    problem = task_id_problem(suite)  # a suite key names the run's folder, as an id names the lane's
    if problem:
        raise UserInputError(
            f"{where} (`{task_id}`) has an unusable suite {_shown(suite)}: {problem}", hint=_ENTRY_HINT
        )
    task_dir = entry.get("task_dir") or f"{suite}/{task_id}"
    problem = task_dir_problem(task_dir) if isinstance(task_dir, str) else "it is not a string"
    if problem:
        raise UserInputError(
            f"{where} (`{task_id}`) has an unusable task_dir {_shown(task_dir)}: {problem}", hint=_ENTRY_HINT
        )
    folder = task_folder(repo, task_dir)
    data = _task_toml(repo / folder)
    return TaskRef(
        task_id=task_id,
        suite=suite,
        path=folder,
        time_limit_sec=_time_limit(data),
        harbor_budget_sec=harbor_budget(data or {}),
    )


HARBOR_DEFAULT_SEC = 600  # Harbor's default build, agent and verifier timeouts
HARBOR_AGENT_SETUP_SEC = 360  # Harbor's fixed agent setup timeout


def task_id_problem(task_id: str) -> str | None:
    """Why `task_id` (or a suite key) cannot name a folder of its own: both do (logs, task copies,
    retried attempts, run folders)."""
    if len(task_id) > TASK_ID_LIMIT:
        return f"longer than {TASK_ID_LIMIT} characters"
    if task_id in (".", "..") or ".." in task_id:
        return "it contains `..`"
    if any(char in task_id for char in "/\\"):
        return "it contains a path separator"
    return _control_problem(task_id)


def task_dir_problem(task_dir: str) -> str | None:
    """Why `task_dir` is not a folder under benchmarks/ of the checkout."""
    if len(task_dir) > TASK_DIR_LIMIT:
        return f"longer than {TASK_DIR_LIMIT} characters"
    path = PurePosixPath(task_dir)
    if path.is_absolute():
        return "it is an absolute path; give it relative to benchmarks/"
    if ".." in path.parts:
        return "it contains `..` and would leave benchmarks/"
    if "\\" in task_dir:
        return "it contains a backslash"
    return _control_problem(task_dir)


def _control_problem(text: str) -> str | None:
    if "\x00" in text:
        return "it contains a NUL character"
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        return "it contains a control character"
    return None


def _shown(value: str) -> str:
    """The bad value as it can be shown: quoted with escapes, and cut when long."""
    text = repr(value)
    return clip(text, _SHOWN_LIMIT)


def _task_toml(folder: Path) -> dict[str, Any] | None:
    """The task.toml, or None when it is absent, not a regular file, too large or malformed."""
    try:
        return tomllib.loads(read_capped(folder / "task.toml", TASK_TOML_SIZE_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def _time_limit(data: Mapping[str, Any] | None) -> int | None:
    """`[task] time_limit_sec` of the task.toml; None when absent or unreadable (Harbor will say why)."""
    return _seconds(data, "task", "time_limit_sec")


def harbor_budget(data: Mapping[str, Any]) -> int:
    """Harbor's longest legitimate run of a task, in seconds before `--timeout-multiplier`.

    Build (`[environment].build_timeout_sec`) and verifier (`[verifier].timeout_sec`) count twice, since
    Harbor retries each once on a timeout; agent setup is Harbor's fixed 360 s; the agent gets
    `[agent].timeout_sec`. Each missing value is Harbor's default, 600 s: CSB's task.tomls have no
    `[agent]` or `[verifier]` section. A lane stopped sooner would be stopped before Harbor gives up.
    """
    build = _seconds(data, "environment", "build_timeout_sec") or HARBOR_DEFAULT_SEC
    agent = _seconds(data, "agent", "timeout_sec") or HARBOR_DEFAULT_SEC
    verifier = _seconds(data, "verifier", "timeout_sec") or HARBOR_DEFAULT_SEC
    return 2 * build + HARBOR_AGENT_SETUP_SEC + agent + 2 * verifier


def _seconds(data: Mapping[str, Any] | None, table: str, key: str) -> int | None:
    section = data.get(table) if data is not None else None
    value = section.get(key) if isinstance(section, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    return int(value)


def _suite_counts(data: Mapping[str, Any], shape: Shape, tasks: tuple[TaskRef, ...]) -> dict[str, int]:
    """Keys come from the file (a suite file's `suites`, else the tasks' suites); counts are the tasks here.

    Counting rather than trusting the declared numbers keeps a truncated or hand-edited file honest.
    """
    counts: dict[str, int] = {}
    for task in tasks:
        counts[task.suite] = counts.get(task.suite, 0) + 1
    declared = data.get("suites") if shape == "suite" else None
    if not isinstance(declared, dict):
        return dict(sorted(counts.items()))
    keys = [key for key in declared if isinstance(key, str) and task_id_problem(key) is None]
    keys += sorted(key for key in counts if key not in declared)
    return {key: counts.get(key, 0) for key in keys}
