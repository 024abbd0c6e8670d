"""The Harbor the bot would run: found, its version, whether it takes the lane command
(`--print-config`), and whether it can load a sample of the default task file's `task.toml` files."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.check import harbor_problems
from bot.csb.harbor_probe import PROBE_TIMEOUT_SEC, lint_tasks, probe_harbor
from bot.csb.harbor_probe import HarborProbe as HarborFindings
from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.probes.checkout import default_spec
from bot.settings import Settings

SAMPLE_SIZE = 5  # task.toml files loaded: spread over the task file, so one bad suite shows


@dataclass(frozen=True)
class HarborProbe:
    name: str = "harbor"
    # Harbor is asked up to five times, each bounded by PROBE_TIMEOUT_SEC.
    timeout_sec: float = 5 * PROBE_TIMEOUT_SEC + 10

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("harbor not checked: no settings")]
        return await asyncio.to_thread(_harbor, context)


def _harbor(context: ProbeContext) -> list[Line]:
    settings = context.settings
    assert settings is not None
    problems = harbor_problems(settings)
    if problems:
        return [fail(problem) for problem in problems]
    launch = settings.launch_config(context.config, context.environ)
    sample = _sample(settings)
    probe = probe_harbor(launch, sample[0] if sample else None)
    lines = _lines(probe)
    if probe.problems or not sample:
        return lines
    return lines + _lines(lint_tasks(launch, sample))


def _lines(found: HarborFindings) -> list[Line]:
    return (
        [ok(text) for text in found.notes]
        + [note(t) for t in found.skipped]
        + [fail(t) for t in found.problems]
    )


def _sample(settings: Settings) -> list[str]:
    spec = default_spec(settings)
    if spec is None:
        return []
    repo = settings.resolved_repo()
    present = [task.path for task in spec.tasks if (repo / task.path).is_dir()]
    if len(present) <= SAMPLE_SIZE:
        return present
    step = len(present) / SAMPLE_SIZE
    return [present[int(i * step)] for i in range(SAMPLE_SIZE)]
