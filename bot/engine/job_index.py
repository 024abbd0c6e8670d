"""Where to look for a lane's trial result without walking every job of the run each time.

All tasks of one lane config share a jobs dir, which holds one Harbor job dir per lane start: a run of
264 tasks has 264 of them. Walking them all for every ended lane costs O(tasks²); instead each jobs
dir's job folders are listed once and remembered with the trial folders they hold, and a lane is
judged inside its own job dir. When that is not unambiguous, the whole jobs dir is searched as before.
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.csb.harbor_run import job_name
from bot.csb.results import attempt_trial
from bot.csb.trials import trial_task_part, trial_task_parts
from bot.store.records import Lane


class JobIndex:
    """Per jobs dir: job folder name → the task-name prefixes of the trial folders inside it."""

    def __init__(self) -> None:
        self._jobs: dict[Path, dict[str, frozenset[str]]] = {}
        self._fresh: set[Path] = set()

    def new_batch(self) -> None:
        """Lanes judged together share one listing of each jobs dir."""
        self._fresh.clear()

    def search_root(self, jobs_dir: Path, task_id: str) -> Path:
        """The one job dir holding a trial of `task_id`, else `jobs_dir` itself (searched whole)."""
        if jobs_dir not in self._fresh:
            self._refresh(jobs_dir)
            self._fresh.add(jobs_dir)
        known = self._jobs.get(jobs_dir, {})
        names = trial_task_parts(task_id)
        matches = [job for job, prefixes in known.items() if prefixes & names]
        return jobs_dir / matches[0] if len(matches) == 1 else jobs_dir

    def _refresh(self, jobs_dir: Path) -> dict[str, frozenset[str]]:
        """List the jobs dir (one call); look inside only job folders not seen with a trial before."""
        try:
            entries = {entry.name for entry in os.scandir(jobs_dir) if entry.is_dir()}
        except OSError:
            return {}
        known = {name: prefixes for name, prefixes in self._jobs.get(jobs_dir, {}).items() if name in entries}
        for name in entries - known.keys():
            prefixes = _trial_prefixes(jobs_dir / name)
            if prefixes:
                known[name] = prefixes  # a job folder without a trial yet is looked at again next time
        self._jobs[jobs_dir] = known
        return known


def _trial_prefixes(job_dir: Path) -> frozenset[str]:
    try:
        names = [entry.name for entry in os.scandir(job_dir) if entry.is_dir()]
    except OSError:
        return frozenset()
    return frozenset(part for name in names if (part := trial_task_part(name)) is not None)


def attempt_job_dir(repo: Path, lane: Lane) -> Path:
    """The job folder the lane's current attempt asked Harbor for with `--job-name`."""
    return repo / lane.jobs_dir / job_name(lane.run_id, lane.id, lane.attempt)


def attempt_result(repo: Path, lane: Lane) -> Path | None:
    """The current attempt's trial result (see `attempt_trial`)."""
    job = job_name(lane.run_id, lane.id, lane.attempt)
    return attempt_trial(repo / lane.jobs_dir, job, lane.task_id)
