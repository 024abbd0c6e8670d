"""On Ray: the head answers (and its version), and a live node offers the lane resource each lane's job
asks for (CSB_RAY_LANE_RESOURCE); with none, every lane would sit PENDING until it times out."""

from __future__ import annotations

from dataclasses import dataclass

from bot.check import RAY_CHECK_TIMEOUT_SEC, ray_head_report
from bot.domain.errors import CsbBotError
from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.rayjobs.jobs_api import RayJobsClient, RayJobsError
from bot.settings import ExecutorChoice


@dataclass(frozen=True)
class RayProbe:
    name: str = "ray"
    timeout_sec: float = 3 * RAY_CHECK_TIMEOUT_SEC

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("executor not checked: no settings")]
        try:
            choice = context.settings.executor(context.config)
        except CsbBotError as exc:
            return [fail(str(exc))]
        if choice.kind != "ray":
            return [note("lanes run as local processes: no Ray head to check")]
        problem, found = await ray_head_report(choice)
        if problem is not None:
            return [fail(problem)]
        return [ok(found or "Ray head answers"), await _lane_resource(choice)]


async def _lane_resource(choice: ExecutorChoice) -> Line:
    resource = choice.ray_lane_resource
    if resource is None:
        return note("lanes ask Ray for no custom resource (CSB_RAY_LANE_RESOURCE unset)")
    async with RayJobsClient(
        str(choice.ray_address), choice.ray_token, timeout_sec=RAY_CHECK_TIMEOUT_SEC
    ) as ray:
        try:
            nodes = await ray.alive_node_resources()
        except RayJobsError as exc:
            return fail(f"Ray nodes not listed: {exc}")
    offering = [node for node in nodes if node.get(resource, 0) >= 1]
    if not offering:
        return fail(
            f"no live Ray node offers {resource} (CSB_RAY_LANE_RESOURCE): every lane would wait PENDING; "
            f"start the workers with --resources='{{\"{resource}\": N}}'"
        )
    slots = sum(node[resource] for node in offering)
    return ok(f"{len(offering)} Ray node(s) offer {resource} ({slots:g} in all)")
