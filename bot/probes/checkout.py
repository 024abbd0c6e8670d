"""The CSB checkout: a task file the bot can read, the lane configs the default run uses, and every
task folder the default task file names (a missing one would fail its lanes at launch)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.check import checkout_problems
from bot.csb.catalog import Catalog
from bot.csb.configs import EVAL_MATRIX_PATH, load_eval_matrix
from bot.domain.errors import CsbBotError
from bot.domain.spec import RunParams, RunSpec
from bot.domain.words import plural
from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.settings import Settings

_LIST_LIMIT = 5


def default_spec(settings: Settings) -> RunSpec | None:
    """What a bare `/csb run` would launch against this checkout, or None when it cannot be read."""
    try:
        return Catalog(settings.resolved_repo()).resolve(RunParams(), default_parallel=1)
    except CsbBotError:
        return None


@dataclass(frozen=True)
class CheckoutProbe:
    name: str = "checkout"
    timeout_sec: float = 30.0

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("CSB checkout not checked: no settings")]
        return await asyncio.to_thread(_checkout, context.settings)


def _checkout(settings: Settings) -> list[Line]:
    problems = checkout_problems(settings)
    if problems:
        return [fail(problem) for problem in problems]
    repo = settings.resolved_repo()
    try:
        spec = Catalog(repo).resolve(RunParams(), default_parallel=1)
    except CsbBotError as exc:
        return [fail(f"CSB checkout {repo}: {exc}")]
    suites = plural(len(spec.suites), "suite")
    lines = [ok(f"CSB checkout {repo}: {spec.task_file} lists {plural(len(spec.tasks), 'task')} in {suites}")]
    lines.append(_configs(settings, spec))
    missing = Catalog(repo).missing_task_folders(spec)
    if missing:
        shown = ", ".join(missing[:_LIST_LIMIT])
        more = f" and {len(missing) - _LIST_LIMIT} more" if len(missing) > _LIST_LIMIT else ""
        lines.append(
            fail(f"{plural(len(missing), 'task folder')} of {spec.task_file} missing: {shown}{more}")
        )
    else:
        lines.append(ok(f"every task folder of {spec.task_file} is present"))
    return lines


def _configs(settings: Settings, spec: RunSpec) -> Line:
    lanes = " + ".join(lane.config for lane in spec.lanes)
    try:
        matrix = load_eval_matrix(settings.resolved_repo())
    except CsbBotError as exc:
        return fail(str(exc))
    if matrix is None:
        return note(f"default lanes {lanes}; no {EVAL_MATRIX_PATH} in the checkout (an older one)")
    return ok(f"default lanes {lanes}; {EVAL_MATRIX_PATH} is readable")
