"""CSB's pairing rule: a one-lane run is allowed only for tasks whose other lane already has a clean result.

A counterpart is a trial of the same task id (under whatever suite key or legacy `ccb_*` name its run used),
with the same model, in the other lane of the same full config, whose status is `passed` or `failed`. They are
found in `runs/official/MANIFEST.json` first (one file), then in the trial results under `runs/staging` and
`runs/official`, below folders named for the needed lane, reading only the trials of wanted tasks. Those
trial folders are looked up in a `TrialIndex` kept between searches (`trial_index.py`), which lists again
only the folders changed since, so a checkout with a year of results stays quick; without one, a search
lists every folder it walks. Blocking I/O; callers run it in a thread.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.csb.configs import MCP_TYPES, lane_plans, load_eval_matrix
from bot.csb.json_file import MIB, UnreadableJson, read_json
from bot.csb.results import RESULT_SIZE_LIMIT
from bot.csb.trial_index import TrialIndex
from bot.csb.trial_keys import COPY_PREFIXES
from bot.csb.trials import short_task_name, trial_task_part
from bot.domain.classify import classify_trial
from bot.domain.spec import Mode, RunSpec
from bot.domain.states import SCORED_LANE_STATES

MANIFEST_PATH = "runs/official/MANIFEST.json"
MANIFEST_SIZE_LIMIT = 64 * MIB  # every official run's tasks: large, but not without bound
RESULT_CATEGORIES = ("staging", "official")

log = logging.getLogger(__name__)

_CLEAN = frozenset(SCORED_LANE_STATES)
_CLEAN_NAMES = frozenset(status.value for status in _CLEAN)

# Older CSB runs name lane folders and MANIFEST keys by the eval_matrix name; the README maps them to these.
_OLDER_NAMES: Mapping[str, tuple[str, ...]] = {
    "baseline-local-direct": ("baseline",),
    "mcp-remote-direct": ("sourcegraph_full",),
    "mcp-scip-remote-direct": ("sourcegraph_scip",),
    "mcp-remote-artifact": ("artifact_full",),
    # CSB's own legacy names are runs of the same lanes (its docs map them both ways).
    "baseline": ("baseline-local-direct",),
    "sourcegraph_full": ("mcp-remote-direct",),
    "artifact_full": ("mcp-remote-artifact",),
}
_EVERY_LANE_NAME = frozenset(MCP_TYPES) | {name for names in _OLDER_NAMES.values() for name in names}

# CSB's status tool: `_normalize_sdlc_task_name` strips these from a trial's task_name.
_SDLC_PREFIX = re.compile(r"^sdlc_[a-z]+_")
_COPY_SUFFIX = re.compile(r"^(.+)_[A-Za-z0-9]{6}$")


def normalise_task_name(name: str) -> str:
    """A trial's task_name as CSB's status tool normalises it, and then without the task copy's prefix,
    so both lanes of a pair (`mcp_<task>_<6>`, `bl_<task>_<6>`, `<task>`) name the same task."""
    name = _SDLC_PREFIX.sub("", name)
    match = _COPY_SUFFIX.match(name)
    if match and "-" in match.group(1):
        name = match.group(1)
    for prefix in COPY_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def counterpart_config(repo: Path, spec: RunSpec) -> str | None:
    """The lane config whose results a one-lane run leans on; None for a paired run."""
    if spec.params.mode is Mode.PAIRED:
        return None
    running = {lane.config for lane in spec.lanes}
    pair = lane_plans(spec.params.full_config, Mode.PAIRED, load_eval_matrix(repo))
    return next(lane.config for lane in pair if lane.config not in running)


def missing_counterparts(repo: Path, spec: RunSpec, index: TrialIndex | None = None) -> list[str]:
    """Task ids of the spec, in its order, that lack a clean counterpart; [] for a paired run. `index`: the
    trial folders as earlier searches left them (None: a fresh one, so every folder walked is listed)."""
    config = counterpart_config(repo, spec)
    if config is None:
        return []
    wanted = list(dict.fromkeys(task.task_id for task in spec.tasks))
    lane_names = frozenset({config, *_OLDER_NAMES.get(config, ())})
    model = spec.params.model
    found = _from_manifest(repo / MANIFEST_PATH, lane_names, model, set(wanted))
    remaining = set(wanted) - found
    if remaining:
        index = index if index is not None else TrialIndex()
        with index.lock:
            found |= _from_trials(repo, lane_names, model, remaining, index)
    return [task_id for task_id in wanted if task_id not in found]


def _from_manifest(path: Path, lane_names: frozenset[str], model: str, wanted: set[str]) -> set[str]:
    """Tasks with a passed/failed entry in a run of this lane and model (`runs["<suite>/<lane>"]`)."""
    data = _read_json(path, MANIFEST_SIZE_LIMIT)
    runs = data.get("runs") if data else None
    if not isinstance(runs, dict):
        return set()
    found: set[str] = set()
    for key, run in runs.items():
        if not isinstance(run, dict) or str(key).rpartition("/")[2] not in lane_names:
            continue
        tasks = run.get("tasks")
        if run.get("model") != model or not isinstance(tasks, dict):
            continue
        for task_id in wanted - found:
            entry = tasks.get(task_id)
            if isinstance(entry, dict) and entry.get("status") in _CLEAN_NAMES:
                found.add(task_id)
    return found


def _from_trials(
    repo: Path, lane_names: frozenset[str], model: str, wanted: set[str], index: TrialIndex
) -> set[str]:
    """The wanted tasks with a clean trial in a lane folder named for the lane. A trial counts for the task
    `_clean_task` names among the wanted tasks its folder's name may belong to: whichever order the trials
    are met in, the same set is found."""
    by_short: dict[str, set[str]] = {}
    for task_id in wanted:
        by_short.setdefault(short_task_name(task_id), set()).add(task_id)
    found: set[str] = set()
    for category in RESULT_CATEGORIES:
        root = repo / "runs" / category
        index.refresh(root, lane_names, _EVERY_LANE_NAME)
        search = _Search(index, root, lane_names, model, by_short)
        for task_id in sorted(wanted - found):
            if task_id not in found:  # it may have been found as another task's candidate meanwhile
                search.task(task_id, found)
        if found >= wanted:
            break
    return found


@dataclass(frozen=True)
class _Search:
    """One root's trials searched for one lane and model, task by task."""

    index: TrialIndex
    root: Path
    lane_names: frozenset[str]
    model: str
    by_short: Mapping[str, set[str]]

    def task(self, task_id: str, found: set[str]) -> None:
        """Adds to `found` what the trials that may be this task's are clean counterparts for, until the
        task is found: first the trial found for it last time, if it is still there."""
        hint_key = "\0".join((str(self.root), self.model, *sorted(self.lane_names), task_id))
        hinted = self.index.hinted(hint_key, self.root, self.lane_names)
        trials = self.index.trials(self.root, self.lane_names, task_id)
        for folder, name in itertools.chain([hinted] if hinted else [], trials):
            stem = trial_task_part(name)
            candidates = _folder_candidates(stem, self.by_short) if stem is not None else None
            if not candidates or task_id not in candidates or candidates <= found:
                continue
            summary = self.index.summary(os.path.join(folder, name, "result.json"), _summarise)
            clean = _clean_task(summary, self.model, candidates) if summary is not None else None
            if clean is not None:
                found.add(clean)
                if clean == task_id:
                    self.index.remember(hint_key, (folder, name))
                    return


@dataclass(frozen=True, slots=True)
class _Trial:
    """What the pairing rule reads of a trial's result.json, kept by the index while the file is unchanged."""

    task_name: str | None  # as CSB's status tool normalises it, lower-cased; None when the result names none
    model: str | None
    clean: bool  # read, finished, and passed or failed


def _summarise(result: str) -> _Trial:
    data = _read_json(Path(result))
    if data is None:
        return _Trial(None, None, clean=False)
    name = data.get("task_name")
    return _Trial(
        task_name=normalise_task_name(name).lower() if isinstance(name, str) else None,
        model=_model(data),
        clean=data.get("finished_at", True) is not None and classify_trial(data).status in _CLEAN,
    )


def _clean_task(trial: _Trial, model: str, candidates: set[str]) -> str | None:
    """The task id this trial is a clean counterpart for; None: other task or model, errored, unfinished,
    or no task name and more than one candidate."""
    if not trial.clean or trial.model != model:
        return None
    if trial.task_name is not None:
        return {candidate.lower(): candidate for candidate in candidates}.get(trial.task_name)
    return next(iter(candidates)) if len(candidates) == 1 else None


def _model(data: Mapping[str, Any]) -> str | None:
    config = data.get("config")
    agent = config.get("agent") if isinstance(config, dict) else None
    name = agent.get("model_name") if isinstance(agent, dict) else None
    return name if isinstance(name, str) else None


def _folder_candidates(stem: str, by_short: Mapping[str, set[str]]) -> set[str] | None:
    """The wanted tasks a trial folder may belong to, by its (cut) name; a task copy's folder is
    `<prefix><task>_<6>` lower-cased and cut, so it is matched against each task's copy names."""
    direct = by_short.get(short_task_name(stem))
    if direct or not stem.startswith(COPY_PREFIXES):
        return direct
    prefix = next(p for p in COPY_PREFIXES if stem.startswith(p))
    stem = stem.lower()
    found = set()
    for tasks in by_short.values():
        for task_id in tasks:
            full = f"{prefix}{task_id}".lower()
            if full.startswith(stem) or stem.startswith(f"{full}_"):
                found.add(task_id)
    return found or None


def _read_json(path: Path, limit: int = RESULT_SIZE_LIMIT) -> dict[str, Any] | None:
    try:
        data = read_json(path, limit)
    except FileNotFoundError:
        return None
    except (OSError, UnreadableJson) as exc:
        log.warning("counterparts: skipping unreadable %s: %s", path, exc)
        return None
    return data if isinstance(data, dict) else None
