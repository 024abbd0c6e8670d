"""What a probe of `csb-bot check` is: a name, its own time limit, and lines it reports.

Each probe looks at one thing the bot depends on (the database, Slack, the checkout, Docker, ...) and says
what it found, one line per finding, marked passed, not applicable or a warning, or failed. The runner
(`runner.py`) gives each probe its time limit, so a dependency that hangs is reported, not waited on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from bot.settings import BotConfig, Settings


class Mark(StrEnum):
    OK = "ok"  # ✓
    NOTE = "note"  # ·: not applicable, skipped, or a warning
    FAIL = "fail"  # ✗: `serve` or the first run would fail on it


@dataclass(frozen=True)
class Line:
    mark: Mark
    text: str


def ok(text: str) -> Line:
    return Line(Mark.OK, text)


def note(text: str) -> Line:
    return Line(Mark.NOTE, text)


def fail(text: str) -> Line:
    return Line(Mark.FAIL, text)


@dataclass(frozen=True)
class ProbeContext:
    """What every probe starts from. `settings` is None only when the settings could not be read at all;
    a setting that failed validation is named in `unusable` (its environment variable) and replaced by
    its default, so the probes that do not need it still run."""

    settings: Settings | None
    config: BotConfig
    environ: Mapping[str, str]
    unusable: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class ProbeReport:
    name: str
    lines: tuple[Line, ...]

    @property
    def failed(self) -> bool:
        return any(line.mark is Mark.FAIL for line in self.lines)


class Probe(Protocol):
    """One dependency. `run` returns its lines; the runner stops it after `timeout_sec`."""

    @property
    def name(self) -> str: ...

    @property
    def timeout_sec(self) -> float: ...

    async def run(self, context: ProbeContext) -> list[Line]: ...
