"""Read a trial's files within a bounded size and time, and say what could not be read.

Agents write what they like: a transcript of gigabytes, a line of megabytes, a trajectory that is not
JSON, `task_metrics.json` with words where numbers belong. Each file is read only up to a cap; a line is
read only up to CSB's own cut (`audit_traces.py` keeps the first 512,000 characters of a line), and the rest
of it skipped without holding it; a scan stops at a deadline. The caller judges the lane on what was read,
and every limit reached or field refused becomes a note in the verdict's `unread`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bot.csb.json_file import MIB, UnreadableJson, read_json

LINE_LIMIT = 512_000  # audit_traces.py cuts every transcript line here
TRANSCRIPT_LIMIT = 256 * MIB  # a transcript is read up to here; past it the lane is judged on the start
SCAN_SECONDS = 10.0  # and for no longer than this
JSON_LIMIT = 64 * MIB  # trajectory.json and task_metrics.json
_CHUNK = 1024 * 1024


class Notes:
    """What could not be read, in words that name the file, collected while reading."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, note: str) -> None:
        if note not in self.items:
            self.items.append(note)


def read_object(path: Path, notes: Notes, *, limit: int = JSON_LIMIT) -> dict[str, Any] | None:
    """A JSON object file, or None: absent (no note: unknown), unreadable or not an object (noted)."""
    try:
        data = read_json(path, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.add(f"{path.name} cannot be read: {exc.strerror or exc}")
        return None
    except UnreadableJson as exc:
        notes.add(f"{path.name} {exc}")
        return None
    if not isinstance(data, dict):
        notes.add(f"{path.name} is not a JSON object")
        return None
    return data


def number(data: Mapping[str, Any] | None, key: str, notes: Notes, where: str) -> float | None:
    """A numeric field, or None when absent, null or not a number (the last noted: a word is not zero)."""
    if data is None:
        return None
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        notes.add(f"{where} {key} is not a number ({type(value).__name__})")
        return None
    return value


def count(data: Mapping[str, Any] | None, key: str, notes: Notes, where: str) -> int | None:
    value = number(data, key, notes, where)
    return None if value is None else int(value)


def transcript_lines(
    path: Path,
    notes: Notes,
    *,
    limit: int = TRANSCRIPT_LIMIT,
    seconds: float = SCAN_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bytes] | None:
    """The transcript's lines, each cut at `LINE_LIMIT` bytes; None when there is no transcript.

    Stops (with a note) at `limit` bytes or after `seconds`; a line longer than the cut is skipped past in
    chunks, never held whole.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.add(f"{path.name} cannot be read: {exc.strerror or exc}")
        return None
    return _lines(handle, path.name, notes, limit, clock() + seconds, clock)


def _lines(
    handle: Any, name: str, notes: Notes, limit: int, deadline: float, clock: Callable[[], float]
) -> Iterator[bytes]:
    read = 0
    with handle:
        while True:
            if read >= limit:
                notes.add(f"{name} was read only to its first {limit // MIB} MiB")
                return
            if clock() > deadline:
                notes.add(f"{name} was read only to byte {read}: its scan ran out of time")
                return
            try:
                line = handle.readline(LINE_LIMIT)
            except OSError as exc:
                notes.add(f"{name} could not be read past byte {read}: {exc.strerror or exc}")
                return
            if not line:
                return
            read += len(line)
            if len(line) == LINE_LIMIT and not line.endswith(b"\n"):
                read += _skip_rest_of_line(handle, limit - read)
            yield line


def _skip_rest_of_line(handle: Any, budget: int) -> int:
    """Read past the rest of a cut line, a chunk at a time, within the bytes the scan has left."""
    skipped = 0
    while skipped < budget:
        chunk = handle.readline(min(_CHUNK, budget - skipped))
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            break
    return skipped
