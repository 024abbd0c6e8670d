"""Finding lane processes again after a restart: by the marker in their environment, not a stored pid.

A pid alone is not enough: the bot may be killed between spawning a lane and recording its pid, and a
recorded pid may have been reused. Every lane carries `CSB_BOT_LANE=<marker>` in its environment;
on Linux `/proc/<pid>/environ` tells us which live process carries which marker.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import socket
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

MARKER_ENV = "CSB_BOT_LANE"
_PROC = Path("/proc")


def this_host() -> str:
    """Where this process lives as far as pids and markers go: the host name and a digest of this boot
    of the machine and of this process's PID namespace.

    Two replicas that share a host name need not see each other's processes: containers with host
    networking each have their own PID namespace, and two machines may be named alike. A pid recorded
    by one means nothing to the other, and a marker it cannot see is not a lost lane. So a lease holder
    is judged dead by its pid, and its lanes adopted by their markers, only by a replica with the same
    view; any other waits for the lease to expire."""
    return f"{socket.gethostname()}~{_process_view()}"


@functools.cache
def _process_view() -> str:
    """A digest of the boot id and the PID namespace; "" parts where the system does not say (no /proc)."""
    parts: list[str] = []
    try:
        parts.append((_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip())
    except OSError:
        parts.append("")
    try:
        namespace = os.stat(_PROC / "self" / "ns" / "pid")
        parts.append(f"{namespace.st_dev}:{namespace.st_ino}")
    except OSError:
        parts.append("")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def markers_supported() -> bool:
    """True where the environment of other processes can be read (Linux /proc)."""
    return (_PROC / "self" / "environ").is_file()


def process_alive(pid: int) -> bool:
    """A live process, not a zombie: an orphaned lane whose parent never reaps it still counts as ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def find_marked(markers: Collection[str]) -> dict[str, int]:
    """Live processes carrying one of `markers`, as marker → pid (the group leader when several match)."""
    wanted = {f"{MARKER_ENV}={marker}".encode() for marker in markers}
    if not wanted or not markers_supported():
        return {}
    found: dict[str, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        marker = _marker_of(entry, wanted)
        if marker is None or not process_alive(pid):
            continue
        if marker not in found or _is_group_leader(pid):
            found[marker] = pid
    return found


def _marker_of(entry: Path, wanted: set[bytes] | None) -> str | None:
    """The lane marker in the process's environment (any, when `wanted` is None), or None."""
    try:
        environ = (entry / "environ").read_bytes()
    except OSError:
        return None
    prefix = f"{MARKER_ENV}=".encode()
    for item in environ.split(b"\0"):
        if (item in wanted) if wanted is not None else item.startswith(prefix):
            return item.decode(errors="replace").split("=", 1)[1]
    return None


@dataclass(frozen=True)
class MarkedProcess:
    """A live process carrying a lane marker: its group leader, and the attempt's `--job-name`."""

    marker: str
    pid: int
    job: str | None


def marked_processes(cwd: Path) -> list[MarkedProcess]:
    """Every live lane process of this host started in `cwd` (the CSB checkout, every lane's working
    folder), one per marker: its group leader where it is among them. Another checkout's lanes (a second
    bot on the host) are not this bot's to judge."""
    if not markers_supported():
        return []
    found: dict[str, int] = {}
    home = os.path.realpath(cwd)
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        marker = _marker_of(entry, None)
        if marker is None:
            continue
        pid = int(entry.name)
        try:
            if os.readlink(entry / "cwd") != home or not process_alive(pid):
                continue
        except OSError:
            continue
        if marker not in found or _is_group_leader(pid):
            found[marker] = pid
    return [MarkedProcess(marker, pid, _job_of(pid)) for marker, pid in sorted(found.items())]


def _job_of(pid: int) -> str | None:
    try:
        argv = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    for flag, value in itertools.pairwise(argv):
        if flag == b"--job-name":
            return value.decode(errors="replace")[:80]
    return None


def _is_group_leader(pid: int) -> bool:
    """Harbor's own children inherit the marker; the lane's process is the leader of its group."""
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False
