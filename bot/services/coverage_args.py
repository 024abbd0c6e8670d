"""The words of `/csb coverage`, parsed once; every error shows the usage."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.command_line import COVERAGE_USAGE
from bot.domain.coverage import DEFAULT_TARGET, MAX_TARGET
from bot.domain.errors import UserInputError
from bot.services.compare_args import split_flags

STAGING_FLAG = "--staging"


@dataclass(frozen=True)
class CoverageArgs:
    suites: tuple[str, ...] = ()  # empty: every suite of the selection
    model: str | None = None
    target: int = DEFAULT_TARGET
    staging: bool = False


def parse_coverage_args(text: str) -> CoverageArgs:
    words = text.replace("=", " ").split()
    staging = any(word.lower() == STAGING_FLAG for word in words)
    rest = " ".join(word for word in words if word.lower() != STAGING_FLAG)
    suites, flags = split_flags(rest, COVERAGE_USAGE, {"model", "target"})
    target = flags.get("target")
    if target is not None and not (target.isascii() and target.isdigit() and 1 <= int(target) <= MAX_TARGET):
        raise UserInputError(
            f"`--target` takes a number of runs from 1 to {MAX_TARGET}; got `{target[:40]}`",
            hint=COVERAGE_USAGE,
        )
    return CoverageArgs(
        suites=tuple(dict.fromkeys(suites)),
        model=flags.get("model"),
        target=int(target) if target else DEFAULT_TARGET,
        staging=staging,
    )
