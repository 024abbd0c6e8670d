"""Move an earlier attempt's files out of the lane's jobs dir before the lane starts again.

The trial result of a failed attempt (a rate limit, say) must not be read as the retry's result, and
its log must not colour the retry's classification. They are kept, next to the lane folders, under
`<run dir>/retried/<task>.<lane config>.attempt<N>/`, where neither the bot nor CSB's result search
(`…/<lane config>/…/result.json`) looks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.csb.json_file import read_json
from bot.csb.paths import lane_path
from bot.csb.results import RESULT_SIZE_LIMIT
from bot.csb.trials import is_trial_folder, is_trial_of
from bot.domain.errors import InfraError

RETRIED_DIR = "retried"


def retire_attempt(
    repo: Path, jobs_dir: str, log_path: str, task_id: str, attempt: int, job: str | None
) -> Path | None:
    """Move attempt `attempt`'s job dirs and log aside; returns where they went, or None if nothing.

    `job` is the job folder that attempt named (`--job-name`); attempts started without one are found
    by the task their job ran. Every path is checked to stay inside the run's folder.
    """
    jobs = lane_path(repo, jobs_dir, jobs_dir)
    if job is not None and (jobs / job).is_dir():
        moved = [lane_path(repo, jobs_dir, jobs / job)]
    else:
        moved = [job_dir for job_dir in _job_dirs(jobs) if _belongs(job_dir, task_id)]
    log_file = lane_path(repo, jobs_dir, log_path)
    if not moved and not log_file.is_file():
        return None
    retired = jobs.parent / RETRIED_DIR
    dest = lane_path(repo, jobs_dir, retired / f"{task_id}.{jobs.name}.attempt{attempt}")
    if dest.parent != retired:
        raise InfraError(f"refused to move attempt {attempt} of `{task_id}` aside: not one folder name")
    dest.mkdir(parents=True, exist_ok=True)
    for job_dir in moved:
        shutil.move(job_dir, dest / job_dir.name)
    if log_file.is_file():
        shutil.move(log_file, dest / log_file.name)
    return dest


def _job_dirs(jobs: Path) -> list[Path]:
    """Harbor's job dirs: folders with a job config.json or a trial folder (not the MCP `tasks/` copies)."""
    if not jobs.is_dir():
        return []
    return [child for child in jobs.iterdir() if child.is_dir() and _is_job(child)]


def _is_job(folder: Path) -> bool:
    if (folder / "config.json").is_file():
        return True
    return any(t.is_dir() and is_trial_folder(t.name) for t in folder.iterdir())


def _belongs(job: Path, task_id: str) -> bool:
    """Whether a job ran `task_id`: its config.json names the task path; else the trial folder's name."""
    try:
        config = read_json(job / "config.json", RESULT_SIZE_LIMIT)
        return bool(Path(config["tasks"][0]["path"]).name == task_id)
    except (OSError, ValueError, KeyError, IndexError, TypeError):  # UnreadableJson is a ValueError
        pass
    return any(t.is_dir() and is_trial_of(t.name, task_id) for t in job.iterdir())
