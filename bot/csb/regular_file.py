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


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder: never read, reported as unreadable."""


class TooLarge(OSError):
    """The file holds more than the caller's cap."""


def open_regular(path: Path) -> BinaryIO:
    """The file opened for reading; NotRegularFile (an OSError) when it is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO's open would wait for a writer
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: Path, limit: int) -> bytes:
    """The file's bytes; OSError when it cannot be read (FileNotFoundError when absent, NotRegularFile,
    TooLarge when it is larger than `limit`)."""
    with open_regular(path) as handle:
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return raw
