"""Read a file of the CSB checkout only when it is a regular file, and only up to a cap.

The checkout is written by other tools and people, and its paths may be links. A FIFO where a task.toml
should be blocks `open` until a writer comes (the reading thread never returns); a link to `/dev/zero`
never ends. So a file is opened without blocking, checked to be a regular file on the descriptor that
is read (no swap between a check and the read), and read to at most `limit + 1` bytes.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_CHUNK = 1024 * 1024  # reads past the size a file had when opened


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder: never read, reported as unreadable."""


class TooLarge(OSError):
    """The file holds more than the caller's cap."""


def open_regular(path: Path) -> BinaryIO:
    """The file opened for reading; NotRegularFile (an OSError) when it is not a regular file."""
    fd, _ = _open_fd(path)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: Path, limit: int) -> bytes:
    """The file's bytes; OSError when it cannot be read (FileNotFoundError when absent, NotRegularFile,
    TooLarge when it is larger than `limit`).

    Read straight from the descriptor, in reads sized by the file's size: a buffered `read(limit + 1)`
    allocates the whole cap first (4 MiB for a result.json of a few hundred bytes), which cost five
    times the rest of the read, and the engine reads such files for every lane that ends."""
    fd, info = _open_fd(path)
    try:
        raw = _read_fd(fd, limit + 1, info.st_size)
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return raw


def _open_fd(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor open for reading and its `fstat`, checked to be a regular file's."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO's open would wait for a writer
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        return fd, info
    except BaseException:
        os.close(fd)
        raise


def _read_fd(fd: int, most: int, size: int) -> bytes:
    """Up to `most` bytes, to the end of the file. The first read asks for one byte past the size the
    file had, so a file that did not grow meanwhile ends at the second read; one that grew (or says 0,
    as some special files do) is read on in chunks, never past `most`."""
    chunks: list[bytes] = []
    got = 0
    want = min(most, size + 1)
    while got < most:
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        want = min(most - got, _CHUNK)
    return b"".join(chunks)
