"""JSON from a CSB checkout, read so that no file's content can stop the bot.

Result files, manifests, suite files and configs are written by other tools (or people), and the bot
reads them on every tick and every request. A file is read only up to a size cap; nesting deep enough
to exhaust the parser's recursion and non-finite numbers (`NaN`, `Infinity`, `1e999`, which would reach
the statistics as a reward) are refused like any other malformed JSON.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from bot.csb.regular_file import TooLarge, read_capped

MIB = 1024 * 1024


class UnreadableJson(ValueError):
    """The file is not JSON the bot will use; the message finishes "<file> …" (e.g. "is not valid JSON")."""


def read_json(path: Path, limit: int) -> Any:
    """The parsed file; OSError when it cannot be read (FileNotFoundError: absent; a FIFO or a device is
    never opened for reading, see `regular_file`), else UnreadableJson."""
    try:
        raw = read_capped(path, limit)
    except TooLarge:
        raise UnreadableJson(f"is larger than {_size(limit)}") from None
    return parse_json(raw)


def parse_json(raw: bytes | str) -> Any:
    """Strict JSON: UnreadableJson for malformed text, too deep a nesting, or a non-finite number."""
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise UnreadableJson("is nested too deeply to read") from None
    except UnreadableJson:
        raise
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise UnreadableJson(f"is not valid JSON: {exc}") from exc


def _refuse_constant(name: str) -> Any:
    raise UnreadableJson(f"holds a non-finite number {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UnreadableJson(f"holds the number {text[:40]}, which is out of range")
    return value


def _size(limit: int) -> str:
    return f"{limit // MIB} MiB" if limit % MIB == 0 else f"{limit} bytes"
