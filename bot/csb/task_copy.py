"""The MCP lane's task folder: CSB runs it from a copy with the `Dockerfile.sg_only` variant swapped in."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.csb.paths import inside, lane_path
from bot.domain.errors import InfraError

SG_ONLY = "Dockerfile.sg_only"


def mcp_task_path(repo: Path, task_path: str, lane_dir: str, task_id: str) -> str:
    """Return the --path for an MCP lane, relative to the checkout.

    When the task ships `environment/Dockerfile.sg_only`, copy the folder into the lane's own folder and
    swap that Dockerfile in, as CSB's harness does; the copy keeps the task id as its last path component,
    because Harbor names the trial after it. Without the variant the task folder is used as it is.
    The copy replaces an earlier one, so where it goes is checked to stay inside the run's folder first.
    """
    source = inside(repo, repo / task_path)
    if not (source / "environment" / SG_ONLY).is_file():
        return task_path
    copy_rel = f"{lane_dir}/tasks/{task_id}"
    copy = lane_path(repo, lane_dir, copy_rel)
    if copy.parent != lane_path(repo, lane_dir, f"{lane_dir}/tasks"):
        raise InfraError(f"refused task copy `{copy_rel}`: the task id is not one folder name")
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(source, copy)
    shutil.copyfile(source / "environment" / SG_ONLY, copy / "environment" / "Dockerfile")
    return copy_rel
