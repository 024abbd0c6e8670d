"""Harbor's name for a trial folder: the task folder's name cut to 32 characters, then `__<7 random>`.

`<jobs dir>/<job>/<trial>/result.json`: the bot finds a lane's result, moves an earlier attempt aside and
searches CSB's results for counterparts by these names, so the rule is written here once. Older Harbor
kept the whole name; newer Harbor cuts it and strips a `_` or `-` left at the cut: all three are accepted.
A job folder is never taken for a trial: its timestamp (`2026-02-23__13-03-01`) has no 7-character id.
"""

from __future__ import annotations

import re

HARBOR_NAME_LIMIT = 32  # characters of the task folder's name Harbor keeps
TRIAL_ID_CHARS = 7  # Harbor's random id after the `__`
_TRIAL_FOLDER = re.compile(rf"(.+)__[A-Za-z0-9]{{{TRIAL_ID_CHARS}}}")


def is_trial_folder(name: str) -> bool:
    """Whether a folder name is a trial's (`<task part>__<id>`); nothing below a trial is another trial."""
    return _TRIAL_FOLDER.fullmatch(name) is not None


def trial_task_part(name: str) -> str | None:
    """The task part of a trial folder's name (`tidb-query-plan-regression-debu`), None if not a trial."""
    match = _TRIAL_FOLDER.fullmatch(name)
    return match.group(1) if match else None


def short_task_name(name: str) -> str:
    """The part of a task folder's name every Harbor version keeps: cut, and without a trailing `_-`."""
    return name[:HARBOR_NAME_LIMIT].rstrip("_-")


def trial_task_parts(task_folder: str) -> frozenset[str]:
    """Every task part Harbor may have given the trials of this task folder (uncut, cut, cut and stripped)."""
    cut = task_folder[:HARBOR_NAME_LIMIT]
    return frozenset({task_folder, cut, cut.rstrip("_-")})


def is_trial_of(name: str, task_folder: str) -> bool:
    """Whether the folder `name` is a trial Harbor started from this task folder (or one sharing its cut)."""
    return trial_task_part(name) in trial_task_parts(task_folder)


def csb_task_folder(name: str) -> bool:
    """CSB's scripts' own, looser rule (`promote_run.py`'s `find_task_dirs`, `generate_manifest.py`'s scan):
    any folder whose name holds `__` is a task folder, whatever follows it."""
    return "__" in name


def csb_task_name(name: str) -> str:
    """CSB's fallback task name for a trial folder (none in result.json): the name before its last `__`."""
    return name.rpartition("__")[0] or name
