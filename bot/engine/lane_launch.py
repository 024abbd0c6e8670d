"""Build one lane's launch exactly as CSB's harness would start it: its argv, environment and task copy.

Blocking file work (an earlier attempt moved aside, the Dockerfile variant copy, `.env.local` sourced when
it changed); the dispatcher runs it in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.csb.child_env import ChildEnv
from bot.csb.harbor_run import LaunchConfig, job_name, lane_argv
from bot.csb.lane_env import (
    EnvLocal,
    LaneVars,
    absolute,
    batch_env,
    lane_env,
    lane_vars,
)
from bot.csb.paths import LaunchPaths
from bot.csb.task_copy import DOCKERFILE, copy_path, lane_task_path
from bot.domain.spec import LaneRole
from bot.engine.attempts import retire_attempt
from bot.executors.base import LaneLaunch
from bot.executors.processes import MARKER_ENV
from bot.store.records import Lane, Run


@dataclass(frozen=True)
class LaunchBatch:
    """What the lanes of one launch share: their common environment and the folders their paths are
    checked against, resolved once for the batch (see `LaunchPaths`)."""

    env: ChildEnv
    paths: LaunchPaths


class LaneLauncher:
    def __init__(self, launch: LaunchConfig) -> None:
        self._launch = launch
        self._env_local = EnvLocal(launch.repo)

    def batch(self) -> LaunchBatch:
        """What every lane of one launch shares. On Daytona the environment is marked as past the cost
        guard's preflight, which the approval gate ran for this run (its verdict is on the card; a
        blocking one stops approval)."""
        cfg = self._launch
        env = batch_env(cfg.base_env, cfg.repo, self._env_local.exports(cfg.base_env))
        if cfg.harbor_env.daytona:
            env = env.with_vars({"DAYTONA_COST_GUARD_PREFLIGHT_DONE": "1"})
        return LaunchBatch(env=env, paths=LaunchPaths(cfg.repo))

    def lane_launch(
        self, run: Run, lane: Lane, attempt: int, home: str, marker: str, batch: LaunchBatch
    ) -> LaneLaunch:
        """The lane's argv and environment, once earlier attempts' files are aside and the task copied."""
        cfg = self._launch
        if attempt > 1:
            earlier = job_name(run.id, lane.id, attempt - 1)
            retire_attempt(cfg.repo, lane.jobs_dir, lane.log_path, lane.task_id, attempt - 1, earlier)
        copy = copy_path(lane.role, lane.config, lane.task_id, marker)
        task_path = lane_task_path(batch.paths, lane.task_path, lane.role, lane.config, copy)
        env = lane_env(batch.env, self._lane_vars(lane, home, task_path)).with_vars({MARKER_ENV: marker})
        job = job_name(run.id, lane.id, attempt)
        return LaneLaunch(
            lane_id=lane.id,
            argv=lane_argv(cfg, absolute(cfg.repo, task_path), run.model, lane.jobs_dir, job, env),
            cwd=cfg.repo,
            env=env,
            log_path=batch.paths.lane_path(lane.jobs_dir, lane.log_path),
            job=job,
        )

    def _lane_vars(self, lane: Lane, home: str, task_path: str) -> LaneVars:
        """`task_path`: the task as this lane runs it (its copy, if any), whose Dockerfile it builds."""
        cfg = self._launch
        mcp_lane = lane.role == LaneRole.MCP  # only its Dockerfile is read (for its repos)
        return lane_vars(
            cfg.repo,
            home=home,
            config=lane.config,
            mcp_type=lane.mcp_type,
            mcp_lane=mcp_lane,
            task_path=lane.task_path,
            suite=lane.suite,
            task_id=lane.task_id,
            jobs_dir=lane.jobs_dir,
            dockerfile=Path(absolute(cfg.repo, task_path)) / "environment" / DOCKERFILE if mcp_lane else None,
        )
