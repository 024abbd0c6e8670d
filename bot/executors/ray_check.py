"""`csb-bot check` on Ray: the head answers (and which Ray it runs), and, when lanes ask for a custom
resource, a live node offers it: without one every lane's job would sit PENDING until `pending_sec`
and fail as an infrastructure failure, retried into the same wait."""

from __future__ import annotations

from bot.executors.base import Probe, ProbeStatus
from bot.executors.ray_settings import RaySettings
from bot.rayjobs.jobs_api import NodeInfo, RayJobsClient, RayJobsError

# `check` is run by hand: a head that does not answer in this long is reported as not answering.
CHECK_TIMEOUT_SEC = 5.0


async def check_ray(settings: RaySettings) -> list[Probe]:
    """The head, then the lane resource; the token is sent, never shown."""
    if settings.address is None:
        return [Probe(ProbeStatus.FAIL, settings.unusable() or "no Ray head address")]
    async with RayJobsClient(settings.address, settings.token, timeout_sec=CHECK_TIMEOUT_SEC) as ray:
        try:
            version = await ray.version()
        except RayJobsError as exc:
            return [Probe(ProbeStatus.FAIL, str(exc))]
        head = Probe(ProbeStatus.OK, f"Ray head {ray.address} answers: Ray {version.ray_version}")
        if settings.lane_resource is None:
            return [head]
        try:
            nodes = await ray.nodes()
        except RayJobsError as exc:
            return [head, Probe(ProbeStatus.FAIL, f"cannot list the Ray cluster's nodes: {exc}")]
    return [head, lane_resource_probe(settings.lane_resource, nodes)]


def lane_resource_probe(resource: str, nodes: list[NodeInfo]) -> Probe:
    """Whether a live node offers the resource each lane's job asks one of."""
    offering = [node for node in nodes if node.alive and node.resources_total.get(resource, 0) >= 1]
    if not offering:
        alive = sum(1 for node in nodes if node.alive)
        return Probe(
            ProbeStatus.FAIL,
            f"no live Ray node offers the lane resource {resource} (CSB_RAY_LANE_RESOURCE; live nodes: "
            f"{alive}): every lane's job would wait PENDING; start workers with "
            f"--resources='{{\"{resource}\": 8}}'",
        )
    slots = int(sum(node.resources_total[resource] for node in offering))
    found = f"{len(offering)} ({slots} slots)"
    return Probe(ProbeStatus.OK, f"Ray nodes offering the lane resource {resource}: {found}")
