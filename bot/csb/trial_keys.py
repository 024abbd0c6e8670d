"""The keys the trial index files a trial folder under, and those it looks a task up by.

A trial folder may be a task's by its name in two ways (`counterparts.py` holds the rule): its cut name is
the task's, or it is a task copy's (`mcp_<task>_<6 random>`, lower-cased, then cut by Harbor) whose name
after the prefix is the start of the task's id, or the id followed by `_`. A folder is filed under keys such
that every task it may belong to looks up at least one of them; the rule itself then decides.
"""

from __future__ import annotations

from functools import lru_cache

from bot.csb.trials import short_task_name

COPY_KEY_CHARS = 16  # how much of a task copy's name a copy key keeps
# Task copies the harness runs (`mcp_<task>_<6 random>`, lower-cased); older runs used `sgonly_`.
COPY_PREFIXES = ("mcp_", "sgonly_", "bl_")


def folder_keys(stem: str) -> frozenset[str]:
    """The keys a trial folder's task part is filed under: its cut name (`d`), and for a task copy's folder
    (`mcp_<task>_<6>`, lower-cased and cut) the start of the name after the prefix, and that start up to each
    `_` in it (`c`). Every task the folder may be a trial of looks up one of these (tasks it is not may too).
    A copy's cut name is kept only to the prefix and `COPY_KEY_CHARS` more: whole, with its random part,
    it would be a key of its own for every copy ever run."""
    short = short_task_name(stem)
    prefix = _copy_prefix(stem)
    if prefix is None:
        return frozenset({"d" + short})
    rest = stem[len(prefix) :].lower()
    keys = {"d" + short[: len(prefix) + COPY_KEY_CHARS], "c" + rest[:COPY_KEY_CHARS]}
    keys.update("c" + rest[:i] for i in range(min(len(rest), COPY_KEY_CHARS)) if rest[i] == "_")
    return frozenset(keys)


@lru_cache(maxsize=4096)  # the same tasks are asked about request after request
def query_keys(task_id: str) -> frozenset[str]:
    """The keys under which a trial folder of this task may be filed (see `folder_keys`): its cut name (for
    an id that itself starts like a copy, also as a copy's is kept), and for copies every start of the
    lower-cased id up to `COPY_KEY_CHARS`, and the id followed by `_`."""
    short = short_task_name(task_id)
    low = task_id.lower()
    keys = {"d" + short, "c" + (low + "_")[:COPY_KEY_CHARS]}
    prefix = _copy_prefix(short)
    if prefix is not None:
        keys.add("d" + short[: len(prefix) + COPY_KEY_CHARS])
    keys.update("c" + low[:i] for i in range(min(len(low), COPY_KEY_CHARS) + 1))
    return frozenset(keys)


def _copy_prefix(name: str) -> str | None:
    return next((p for p in COPY_PREFIXES if name.startswith(p)), None)
