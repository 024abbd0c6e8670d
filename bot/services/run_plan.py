"""Turn an approved spec into a run and its lane rows: where each lane writes and how long it may take."""

from __future__ import annotations

from datetime import datetime

from bot.csb.harbor_run import SUITE_SLOT, jobs_dir, run_dir_name, run_stamp
from bot.domain.spec import LanePlan, RunSpec, TaskRef
from bot.store.records import NewLane, NewRun
from bot.store.runs import run_id_of

TEARDOWN_SEC = 300  # Harbor's teardown after its last phase (containers, sandbox) before it exits


def plan_run(
    spec: RunSpec, request_id: int, now: datetime, *, timeout_multiplier: int, default_timeout_sec: int
) -> tuple[NewRun, list[NewLane]]:
    """One run (its id will be the request's: `run_id_of`) and one lane per task and lane plan.

    Lanes write where CSB's harness would: one run folder per suite (`<suite>_<model>_<time>_<id>`), even
    when the request spans many, since CSB's status tool tells a run folder's suite by its name.
    """
    run_id = run_id_of(request_id)
    suites = sorted({task.suite for task in spec.tasks})
    stamp = run_stamp(now)
    folders = {suite: run_dir_name(suite, spec.params.model, stamp, str(run_id)) for suite in suites}
    run_dir = (
        folders[suites[0]]
        if len(suites) == 1
        else run_dir_name(SUITE_SLOT, spec.params.model, stamp, str(run_id))
    )
    run = NewRun(
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
            jobs_dir(category, folders[task.suite], plan.config),
            lane_timeout_sec(task, timeout_multiplier, default_timeout_sec),
        )
        for index, task in enumerate(spec.tasks)
        for plan in spec.lanes
    ]
    return run, lanes


def lane_timeout_sec(task: TaskRef, multiplier: int, default_sec: int) -> int:
    """When the bot stops a lane: never before Harbor itself would give up (its budget for the task,
    times the multiplier, plus time to tear down), nor before `[task] time_limit_sec` × the multiplier,
    nor before the configured default."""
    budget = (task.harbor_budget_sec or 0) * multiplier + TEARDOWN_SEC
    limit = (task.time_limit_sec or 0) * multiplier
    return max(budget, limit, default_sec)


def _lane(task: TaskRef, plan: LanePlan, index: int, lane_dir: str, timeout_sec: int) -> NewLane:
    return NewLane(
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
