"""Finding lane processes again after a restart: by the marker in their environment, not a stored pid.

A pid alone is not enough: the bot may be killed between spawning a lane and recording its pid, and a
recorded pid may have been reused. Every lane carries `CSB_BOT_LANE=<marker>` in its environment;
on Linux `/proc/<pid>/environ` tells us which live process carries which marker.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Collection
from pathlib import Path

MARKER_ENV = "CSB_BOT_LANE"
_PROC = Path("/proc")


def this_host() -> str:
    return socket.gethostname()


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


def _marker_of(entry: Path, wanted: set[bytes]) -> str | None:
    try:
        environ = (entry / "environ").read_bytes()
    except OSError:
        return None
    for item in environ.split(b"\0"):
        if item in wanted:
            return item.decode().split("=", 1)[1]
    return None


def _is_group_leader(pid: int) -> bool:
    """Harbor's own children inherit the marker; the lane's process is the leader of its group."""
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False
