"""When a lane last showed progress: the newest change to its log or anywhere in its attempt's job folder
(Harbor writes the trial's agent logs, trajectory and results there as it goes).

Read only for a lane whose log has been quiet for a while, and at most `MOST_ENTRIES` entries of its
folder, so a trial that wrote many files costs a bounded look, never a walk of the whole tree each tick.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

MOST_ENTRIES = 20_000


def mtime(path: Path) -> float | None:
    """The path's modification time (seconds since the epoch), or None when it does not exist."""
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def last_change(log: Path, job_dir: Path, most: int = MOST_ENTRIES) -> datetime | None:
    """The newest modification time of the log, the job folder and everything under it (up to `most`
    entries, links not followed); None when none of them exists."""
    times = [t for t in (mtime(log), mtime(job_dir)) if t is not None]
    seen = 0
    stack = [job_dir]
    while stack and seen < most:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    times.append(info.st_mtime)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    if seen >= most:
                        break
        except OSError:
            continue
    return datetime.fromtimestamp(max(times), tz=UTC) if times else None
