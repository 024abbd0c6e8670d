"""`/csb run --tasks id,id`: the named tasks of a task file, written as a selection file in CSB's shape.

A typed id matches a task id of the file whatever its case (CSB's `plan_variance_runs.py` keys tasks by
`task_id.lower()`, and CSB's ids are lower case but for a few prefixes such as `CCX-`); the selection file
keeps the file's own spelling. Each task object is copied as the file has it, with `benchmark` added
where the file names the suite otherwise (a suite file's `suite`), since CSB's selection readers
(`run_selected_tasks.sh`, `plan_variance_runs.py`) take the suite from `benchmark`. Blocking I/O; callers
run it in a thread. Nothing is written unless every id is found, once, within the limit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.csb.catalog import TASK_FILE_SIZE_LIMIT, Catalog
from bot.csb.coverage_files import GAP_FILL_DIR, write_selection_file
from bot.csb.json_file import read_json
from bot.domain.command_line import TASKS_FLAG, nearest
from bot.domain.errors import UserInputError
from bot.domain.spec import TaskRef
from bot.domain.words import plural

_SUITE_KEYS = ("benchmark", "suite", "mcp_suite")
_LISTED = 8  # task ids shown when a suite is named wrong or an id matches nothing close


@dataclass(frozen=True)
class NamedTasks:
    selection_file: str  # written, from the checkout root
    tasks: tuple[TaskRef, ...]


def pick(
    catalog: Catalog, task_file: str | None, suite: str | None, ids: tuple[str, ...], limit: int, stamp: str
) -> NamedTasks:
    """The tasks `ids` name in `task_file` (the default one when None), narrowed to `suite` when given,
    written to `configs/harnesses/tasks_<stamp>_<digest>.json`; UserInputError (one line) otherwise."""
    if len(ids) > limit:
        raise UserInputError(
            f"`{TASKS_FLAG}` names {len(ids)} tasks; a quick rerun takes at most {limit} "
            "(the `quick_rerun_max_tasks` setting): run the suite, or a selection file, for more"
        )
    loaded = catalog.load(task_file)
    if suite is not None and suite not in loaded.suites:
        close = nearest(suite, tuple(loaded.suites))
        raise UserInputError(
            f"`{suite[:60]}` is not a suite of `{loaded.path}`"
            + (f"; did you mean `{close}`?" if close else f"; its suites: {', '.join(sorted(loaded.suites))}")
        )
    candidates = [task for task in loaded.tasks if suite is None or task.suite == suite]
    chosen = tuple(_one(task_id, candidates, loaded.path, suite) for task_id in ids)
    entries = _entries(catalog.repo / loaded.path, chosen)
    digest = hashlib.sha256(
        "\n".join([loaded.path, *(f"{t.suite}/{t.task_id}" for t in chosen)]).encode()
    ).hexdigest()[:8]
    where = f"suite `{suite}` of " if suite else ""
    rel = write_selection_file(
        catalog.repo,
        f"{GAP_FILL_DIR}/tasks_{stamp}_{digest}.json",
        entries,
        f"Quick rerun of {plural(len(chosen), 'named task')} of {where}{loaded.path}",
    )
    return NamedTasks(rel, chosen)


def _one(typed: str, candidates: list[TaskRef], path: str, suite: str | None) -> TaskRef:
    found = [task for task in candidates if task.task_id.casefold() == typed.casefold()]
    where = f"suite `{suite}` of `{path}`" if suite else f"`{path}`"
    if not found:
        ids = tuple(dict.fromkeys(task.task_id for task in candidates))
        close = nearest(typed.casefold(), tuple(i.casefold() for i in ids))
        match = next((i for i in ids if i.casefold() == close), None) if close else None
        tail = f"; did you mean `{match}`?" if match else f"; e.g. {', '.join(ids[:_LISTED])}"
        raise UserInputError(f"`{typed[:80]}` is not a task of {where}{tail}")
    if len({task.suite for task in found}) > 1:
        suites = ", ".join(sorted({task.suite for task in found}))
        raise UserInputError(f"`{typed[:80]}` is a task of several suites ({suites}); add `--suite`")
    return found[0]


def _entries(path: Path, chosen: tuple[TaskRef, ...]) -> list[dict[str, Any]]:
    """The file's task objects for `chosen`, as they are (plus `benchmark`), in the order named."""
    data = read_json(path, TASK_FILE_SIZE_LIMIT)
    raw = [entry for entry in data["tasks"] if isinstance(entry, dict)]
    picked = []
    for task in chosen:
        entry = next(e for e in raw if e.get("task_id") == task.task_id and task.suite in _suites(e))
        picked.append(entry if "benchmark" in entry else {**entry, "benchmark": task.suite})
    return picked


def _suites(entry: dict[str, Any]) -> set[Any]:
    return {entry.get(key) for key in _SUITE_KEYS}
