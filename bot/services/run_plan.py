"""Turn an approved spec into a run and its lane rows: where each lane writes and how long it may take."""

from __future__ import annotations

from datetime import datetime

from bot.csb.command import jobs_dir, run_dir_name
from bot.domain.spec import LanePlan, RunSpec, TaskRef
from bot.store.models import Lane, Run
from bot.store.runs import run_id_of


def plan_run(
    spec: RunSpec, request_id: int, now: datetime, *, timeout_multiplier: int, default_timeout_sec: int
) -> tuple[Run, list[Lane]]:
    """One Run row (its id is the request's: `run_id_of`) and one lane per task and lane plan."""
    run_id = run_id_of(request_id)
    run_dir = run_dir_name(spec.suite_label, spec.params.model, now, str(run_id))
    run = Run(
        id=run_id,
        request_id=request_id,
        run_dir=run_dir,
        model=spec.params.model,
        parallel=spec.parallel,
        created_at=now,
    )
    category = spec.params.category.value
    lanes = [
        _lane(
            task,
            plan,
            index,
            jobs_dir(category, run_dir, plan.config),
            lane_timeout_sec(task, timeout_multiplier, default_timeout_sec),
        )
        for index, task in enumerate(spec.tasks)
        for plan in spec.lanes
    ]
    return run, lanes


def lane_timeout_sec(task: TaskRef, multiplier: int, default_sec: int) -> int:
    """The task's time limit times Harbor's multiplier, as Harbor itself allows; else CSB's 4 h default."""
    return task.time_limit_sec * multiplier if task.time_limit_sec else default_sec


def _lane(task: TaskRef, plan: LanePlan, index: int, lane_dir: str, timeout_sec: int) -> Lane:
    return Lane(
        run_id=0,
        pair_index=index,
        task_id=task.task_id,
        suite=task.suite,
        task_path=task.path,
        role=plan.role.value,
        config=plan.config,
        mcp_type=plan.mcp_type,
        timeout_sec=timeout_sec,
        jobs_dir=lane_dir,
        log_path=f"{lane_dir}/{task.task_id}.log",
    )
