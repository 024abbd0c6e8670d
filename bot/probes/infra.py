"""The machine lanes run on, as CSB's `check-infra` sees it: Docker up when Harbor's environment is
Docker, and free disk under the checkout's `runs/` (5 GB blocks, 20 GB recommended)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.csb.disk_space import disk_space
from bot.csb.docker_daemon import PING_TIMEOUT_SEC, docker_problem, needs_docker
from bot.probes.base import Line, ProbeContext, fail, note, ok


@dataclass(frozen=True)
class DockerProbe:
    name: str = "docker"
    timeout_sec: float = PING_TIMEOUT_SEC + 5

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("Docker not checked: no settings")]
        env = context.settings.launch_config(context.config, context.environ).harbor_env
        if not needs_docker(env):
            return [note(f"Docker not needed: Harbor's environment is {env.name} (HARBOR_ENV)")]
        problem = await docker_problem(context.environ, context.config.engine.docker_ping_sec)
        return [fail(problem)] if problem else [ok("Docker daemon answers (Harbor's default environment)")]


@dataclass(frozen=True)
class DiskProbe:
    name: str = "disk"
    timeout_sec: float = 10.0

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("free disk not checked: no settings")]
        repo = context.settings.resolved_repo()
        try:
            space = await asyncio.to_thread(disk_space, repo)
        except OSError as exc:
            return [note(f"free disk not checked: {repo}: {exc.strerror or exc}")]
        if space.blocking:
            return [fail(space.describe())]
        return [note(space.describe())] if space.low else [ok(space.describe())]
