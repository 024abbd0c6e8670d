"""A throwaway one-node Ray head for the tests: `ray start --head` on loopback from the venv named by
CSB_TEST_RAY (the folder holding its `ray` and `python`; `make test` builds `.venv-ray` and sets it),
free ports, its own temporary folder, few CPUs, started lazily by the first test that asks for it and
stopped at the end of the session.

`ray stop` is not used to stop it: it stops every Ray process of the machine, other heads included.
Instead every process of this head carries a marker in its environment (Ray hands its environment down
to its workers, job supervisors and job entrypoints), and stopping is SIGTERM, then SIGKILL, to every
process that carries it, until none is left.

Without CSB_TEST_RAY the Ray tests are skipped, except under CI (`CI=true`), where that is an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

MARKER = "CSB_TEST_RAY_HEAD"
# What the head offers: few CPUs (a job's supervisor takes none) and the custom resource lanes may ask for.
SLOTS = 8
_START_SECONDS = 120
_START_ATTEMPTS = 3
_STOP_SECONDS = 1  # Ray's GCS and raylet outlive a SIGTERM: a throwaway head needs no more


def ray_bin() -> Path | None:
    """The folder holding the test venv's `ray`, or None when CSB_TEST_RAY is unset or holds no `ray`."""
    folder = os.environ.get("CSB_TEST_RAY", "").strip()
    if not folder:
        return None
    path = Path(folder)
    return path if (path / "ray").is_file() else None


def required() -> bool:
    """Under CI the Ray tests must run: a missing venv or a head that does not start fails them."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def marked_pids(name: str, value: str) -> list[int]:
    """Every process whose environment has `name` set to `value`."""
    needle = f"{name}={value}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def describe_pids(pids: list[int]) -> str:
    """Each process's pid, parent, process group, session, state and command line, for a failure's
    message (a process gone meanwhile is said so)."""
    lines = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            lines.append(f"{pid}: gone")
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, ppid, pgid, sid = fields[0], fields[1], fields[2], fields[3]
        lines.append(f"{pid}: ppid {ppid} pgid {pgid} sid {sid} state {state}: {command[:200]}")
    return "\n".join(lines)


class RayHead:
    """One head for the session; `restart()` stops it and starts it again on the same ports."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="csb-ray-"))
        self.marker = uuid.uuid4().hex
        names = (
            "gcs",
            "dashboard",
            "agent_http",
            "agent_grpc",
            "client",
            "node_manager",
            "objects",
            "metrics",
        )
        self.ports = {name: free_port() for name in (*names, "runtime_env")}
        self.dashboard_url = f"http://127.0.0.1:{self.ports['dashboard']}"
        self.running = False

    def _command(self) -> list[str]:
        ports = self.ports
        return [
            str(self.bin_dir / "ray"),
            "start",
            "--head",
            "--node-ip-address=127.0.0.1",
            "--dashboard-host=127.0.0.1",
            "--include-dashboard=true",
            "--disable-usage-stats",
            f"--port={ports['gcs']}",
            f"--dashboard-port={ports['dashboard']}",
            f"--dashboard-agent-listen-port={ports['agent_http']}",
            f"--dashboard-agent-grpc-port={ports['agent_grpc']}",
            f"--ray-client-server-port={ports['client']}",
            f"--node-manager-port={ports['node_manager']}",
            f"--object-manager-port={ports['objects']}",
            f"--metrics-export-port={ports['metrics']}",
            f"--runtime-env-agent-port={ports['runtime_env']}",
            "--num-cpus=1",
            f"--resources={json.dumps({'csb_slot': SLOTS})}",
            "--object-store-memory=100000000",
            f"--temp-dir={self.folder}",
        ]

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            {
                MARKER: self.marker,
                "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
                "RAY_USAGE_STATS_ENABLED": "0",
                # The venv's bin first, as when an operator starts the head from an activated venv.
                "PATH": f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}",
            }
        )
        return env

    def start(self) -> None:
        """Start the head and wait until its Jobs API answers.

        `ray start` gives the raylet 30 s to register (fixed in Ray 2.60, whatever its message says about
        RAY_raylet_start_wait_time_s), which a loaded test machine can miss: what a failed start left is
        stopped, and the start is tried again."""
        for attempt in range(1, _START_ATTEMPTS + 1):
            done = subprocess.run(
                self._command(),
                env=self._environment(),
                capture_output=True,
                text=True,
                timeout=_START_SECONDS,
                check=False,
                start_new_session=True,
            )
            if done.returncode == 0:
                break
            self.kill()
            if attempt == _START_ATTEMPTS:
                failure = done.stderr.strip()[-2000:]
                raise RuntimeError(f"ray start failed {attempt} times ({done.returncode}): {failure}")
        self.running = True
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_SECONDS
        last = ""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.dashboard_url}/api/jobs/", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except (OSError, urllib.error.URLError) as exc:
                last = str(exc)
            time.sleep(0.2)
        raise RuntimeError(f"the Ray head's Jobs API did not answer in {_START_SECONDS} s: {last}")

    def processes(self) -> list[int]:
        """The pids of every process of this head: its own, its workers', its jobs'."""
        return marked_pids(MARKER, self.marker)

    def kill(self) -> None:
        """SIGTERM every process of the head, then SIGKILL what is left, until nothing is."""
        self.running = False
        deadline = time.monotonic() + _STOP_SECONDS
        signum = signal.SIGTERM
        while pids := self.processes():
            if time.monotonic() > deadline:
                signum = signal.SIGKILL
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signum)
            time.sleep(0.2)

    def crash(self) -> None:
        """SIGKILL every process of the head at once, as a crash of its machine would: its jobs' lanes
        die without a word (no trial result), as they do when their supervisors die with the head."""
        self.running = False
        while pids := self.processes():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)

    def restart(self) -> None:
        """Stop the head and start it again at the same ports and folder: the jobs it knew are gone."""
        self.kill()
        self.start()

    def stop(self) -> None:
        """Stop the head if it runs, and remove its folder."""
        try:
            self.kill()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
