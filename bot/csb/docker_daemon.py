"""Whether the Docker daemon answers, asked as the Docker CLI would reach it (DOCKER_HOST, else the
default socket): CSB's `check-infra` runs `timeout 10 docker info` before a local launch, because with
the daemon down every lane fails with "Docker daemon is not running" and is retried for nothing.

The daemon's `/_ping` is asked directly (no `docker` executable needed), with a time limit: a socket
that accepts and never answers counts as a daemon that is not running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.csb.harbor_run import HarborEnv

if TYPE_CHECKING:
    import aiohttp

DEFAULT_SOCKET = "/var/run/docker.sock"
PING_TIMEOUT_SEC = 10.0  # CSB's `timeout 10 docker info`
_DOCKER_ENVIRONMENTS = ("", "docker")  # Harbor's default environment is local Docker


def needs_docker(env: HarborEnv) -> bool:
    return env.name in _DOCKER_ENVIRONMENTS


async def docker_problem(environ: Mapping[str, str], timeout_s: float = PING_TIMEOUT_SEC) -> str | None:
    """None when the daemon answers its ping; otherwise why not, in one line naming where it was asked."""
    # aiohttp is loaded here, not with the module: the settings read PING_TIMEOUT_SEC, and every
    # `csb-bot` start that stops before a ping (`db`, a refused start) would load it for nothing.
    import aiohttp

    host = environ.get("DOCKER_HOST", "").strip() or f"unix://{DEFAULT_SOCKET}"
    parts = urlsplit(host)
    if parts.scheme == "unix":
        connector: aiohttp.BaseConnector = aiohttp.UnixConnector(path=parts.path)
        url = "http://docker/_ping"
    elif parts.scheme in ("tcp", "http", "https"):
        connector = aiohttp.TCPConnector()
        scheme = "https" if parts.scheme == "https" or environ.get("DOCKER_TLS_VERIFY") else "http"
        url = f"{scheme}://{parts.netloc}/_ping"
    else:
        return f"DOCKER_HOST {host} is not a unix:// or tcp:// address"
    try:
        async with (
            aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=timeout_s)
            ) as session,
            session.get(url) as answer,
        ):
            if answer.status == 200:
                return None
            return f"Docker daemon at {host} answered HTTP {answer.status} to its ping"
    except TimeoutError:
        return f"Docker daemon is not running: {host} did not answer in {timeout_s:g} s"
    except aiohttp.ClientConnectorError as exc:
        reason = exc.os_error.strerror or type(exc.os_error).__name__
        return f"Docker daemon is not running: cannot reach {host} ({reason})"
    except aiohttp.ClientError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"Docker daemon is not running: cannot reach {host} ({reason[:160]})"
