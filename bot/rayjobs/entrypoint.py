"""A lane's Ray job: the entrypoint that runs `lane_wrapper.py` on the worker, and the stop settings.

The wrapper's source travels inside the entrypoint (`python3 -c`), compressed: the bot's package need
not be installed on the workers, and every job's entrypoint comes back in each `GET /api/jobs/`, so it
is kept short (about 4 KB). The shell Ray runs the entrypoint with takes `python3`, else `python`,
from the job's PATH, which is the lane's (the bot's own, from `runtime_env.env_vars`): so the bot's
PATH must find a Python on the workers too (the same path on every host, as the checkout is). The
wrapper needs only Python 3.8 and its standard library.
"""

from __future__ import annotations

import base64
import math
import shlex
import zlib
from collections.abc import Sequence
from pathlib import Path

WRAPPER = Path(__file__).with_name("lane_wrapper.py")
# Ray's SIGKILL comes this long after the wrapper's own, so the wrapper kills the lane's whole group.
STOP_MARGIN_SEC = 5


def _packed_wrapper() -> str:
    packed = base64.b64encode(zlib.compress(WRAPPER.read_bytes(), 9)).decode()
    return f"import base64,zlib;exec(zlib.decompress(base64.b64decode('{packed}')))"


def lane_entrypoint(argv: Sequence[str], cwd: Path, log_path: Path, grace_sec: float) -> str:
    """The shell command of a lane's job: the lane's argv run in `cwd` by the wrapper, output appended to
    `log_path`, SIGKILL `grace_sec` after the stop's SIGINT. Paths must be the same on every worker."""
    wrapper_args = ["--cwd", str(cwd), "--log", str(log_path), "--grace", f"{grace_sec:g}", "--", *argv]
    command = shlex.join(["-c", _packed_wrapper(), *wrapper_args])
    return f'PY=$(command -v python3 || command -v python) && exec "$PY" {command}'


def stop_env(grace_sec: float) -> dict[str, str]:
    """The job's env_vars that make Ray's stop a local lane's: SIGINT (Ray's default is SIGTERM), and
    Ray's own SIGKILL only after the wrapper's (Ray's default wait is 3 s). Ray 2.60 honours both from
    the job's runtime_env."""
    return {
        "RAY_JOB_STOP_SIGNAL": "SIGINT",
        "RAY_JOB_STOP_WAIT_TIME_S": str(math.ceil(grace_sec) + STOP_MARGIN_SEC),
    }
