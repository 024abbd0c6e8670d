"""The credentials the default run's MCP lane needs (SOURCEGRAPH_ACCESS_TOKEN for CSB's default config,
Augment's or GitHub's for theirs), checked as the card's preflight checks them: without them every
default paired request would be blocked on its card. Names only, never values."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.csb.preflight import credential_options
from bot.probes.base import Line, ProbeContext, fail, note, ok
from bot.probes.checkout import default_spec


@dataclass(frozen=True)
class CredentialsProbe:
    name: str = "credentials"
    timeout_sec: float = 30.0

    async def run(self, context: ProbeContext) -> list[Line]:
        if context.settings is None:
            return [note("lane credentials not checked: no settings")]
        spec = await asyncio.to_thread(default_spec, context.settings)
        if spec is None:
            return [note("lane credentials not checked: the checkout cannot be read")]
        mcp_lanes = [lane for lane in spec.lanes if lane.mcp_type != "none"]
        if not mcp_lanes:
            return [note("lane credentials not needed: the default run has no MCP lane")]
        lane = mcp_lanes[0]
        options = credential_options(lane.mcp_type)
        env = context.environ
        present = next((names for names in options if all(env.get(name, "").strip() for name in names)), None)
        if present is not None:
            return [ok(f"{' and '.join(present)} is set (the {lane.config} lane needs it)")]
        wanted = " or ".join(" and ".join(names) for names in options)
        return [
            fail(f"{wanted} is not set; the default {lane.config} lane needs it (its cards would be blocked)")
        ]
