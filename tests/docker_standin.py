"""A Docker daemon stand-in for the tests: it answers `GET /_ping` on a Unix socket as dockerd does
(200, body `OK`, its API version in a header) and nothing else. The bot asks only that, before a local
Docker launch; lanes of the example bench's Harbor stand-in build no image. Served once per test session
from a daemon thread, so child processes (`serve`) can reach it as well as the tests' own event loops."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from pathlib import Path

from aiohttp import web

API_VERSION = "1.47"


async def _ping(_request: web.Request) -> web.Response:
    return web.Response(text="OK", headers={"Api-Version": API_VERSION, "Docker-Experimental": "false"})


def serve_docker_standin() -> str:
    """Start the stand-in; returns its `DOCKER_HOST` (unix://…)."""
    path = Path(tempfile.mkdtemp(prefix="csb-docker-")) / "docker.sock"
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    async def start() -> None:
        app = web.Application()
        app.router.add_route("*", "/_ping", _ping)
        app.router.add_route("*", "/{version}/_ping", _ping)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.UnixSite(runner, str(path)).start()
        ready.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    threading.Thread(target=serve, name="docker-standin", daemon=True).start()
    if not ready.wait(30):
        raise RuntimeError("the Docker stand-in did not start")
    return f"unix://{path}"
