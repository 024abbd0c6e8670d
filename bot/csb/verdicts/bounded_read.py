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
from bot.csb.regular_file import open_regular

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


def transcript_blocks(
    path: Path,
    notes: Notes,
    *,
    limit: int = TRANSCRIPT_LIMIT,
    seconds: float = SCAN_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bytes] | None:
    """The transcript as blocks of whole lines (about `BLOCK` bytes each); None when there is no transcript.

    Each line is cut at `LINE_LIMIT` bytes (a cut line keeps a newline, so no line runs into the next),
    and the rest of it skipped, never held. Stops (with a note) at `limit` bytes or after `seconds`,
    checked once a block. Blocks are read whole and searched whole: Python does a few calls per block,
    not per line, so a 200 MB transcript costs well under a second of CPU.
    """
    try:
        handle = open_regular(path)  # a FIFO or a device is never read
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.add(f"{path.name} cannot be read: {exc.strerror or exc}")
        return None
    return _blocks(handle, path.name, notes, limit, clock() + seconds, clock)


BLOCK = 4 * MIB
_WINDOW = LINE_LIMIT // 2  # a line of LINE_LIMIT bytes or more covers at least one whole aligned window


def _blocks(
    handle: Any, name: str, notes: Notes, limit: int, deadline: float, clock: Callable[[], float]
) -> Iterator[bytes]:
    read = 0
    carry = b""  # the start of a line the last block ended in (at most LINE_LIMIT bytes)
    skipping = False  # inside the rest of a cut line
    with handle:
        while True:
            if read >= limit:
                if handle.read(1):
                    notes.add(f"{name} was read only to its first {limit // MIB} MiB")
                break
            if clock() > deadline:
                notes.add(f"{name} was read only to byte {read}: its scan ran out of time")
                break
            try:
                chunk = handle.read(min(BLOCK, limit - read))
            except OSError as exc:
                notes.add(f"{name} could not be read past byte {read}: {exc.strerror or exc}")
                break
            if not chunk:
                break
            read += len(chunk)
            if skipping:
                end = chunk.find(b"\n")
                if end < 0:
                    continue
                chunk, skipping = chunk[end + 1 :], False
            data = carry + chunk
            last = data.rfind(b"\n")
            carry = data[last + 1 :]
            if len(carry) >= LINE_LIMIT:
                lines = data[: last + 1] + carry[:LINE_LIMIT] + b"\n"
                carry, skipping = b"", True
            else:
                lines = data[: last + 1]
            if lines:
                yield _cut_long_lines(lines)
    if carry:
        yield carry  # a last line without a newline


def _cut_long_lines(block: bytes) -> bytes:
    """The block with every line longer than LINE_LIMIT cut there; the block itself when none is (the
    usual case, seen from one `find` per window)."""
    windows = range(0, len(block) - _WINDOW + 1, _WINDOW)
    if all(block.find(b"\n", start, start + _WINDOW) >= 0 for start in windows):
        return block
    parts = block.split(b"\n")
    tail = parts.pop()  # b"" when the block ends in a newline
    cut = b"".join(part[:LINE_LIMIT] + b"\n" for part in parts)
    return cut + tail[:LINE_LIMIT]
