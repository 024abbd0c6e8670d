"""The words of `/csb coverage`, parsed once; every error shows the usage."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.command_line import COVERAGE_USAGE
from bot.domain.coverage import DEFAULT_TARGET, MAX_TARGET
from bot.domain.errors import UserInputError
from bot.services.compare_args import split_flags

STAGING_FLAG = "--staging"
FILL_FLAG = "--fill"  # request runs of the tasks with no valid run on a lane
PLAN_FLAG = "--plan"  # request CSB's variance waves up to the target
_SWITCHES = (STAGING_FLAG, FILL_FLAG, PLAN_FLAG)


@dataclass(frozen=True)
class CoverageArgs:
    suites: tuple[str, ...] = ()  # empty: every suite of the selection
    model: str | None = None
    target: int = DEFAULT_TARGET
    staging: bool = False
    fill: bool = False
    plan: bool = False


def parse_coverage_args(text: str) -> CoverageArgs:
    words = text.replace("=", " ").split()
    switches = {word.lower() for word in words if word.lower() in _SWITCHES}
    rest = " ".join(word for word in words if word.lower() not in _SWITCHES)
    suites, flags = split_flags(rest, COVERAGE_USAGE, {"model", "target"})
    target = flags.get("target")
    if target is not None and not (target.isascii() and target.isdigit() and 1 <= int(target) <= MAX_TARGET):
        raise UserInputError(
            f"`--target` takes a number of runs from 1 to {MAX_TARGET}; got `{target[:40]}`",
            hint=COVERAGE_USAGE,
        )
    if FILL_FLAG in switches and PLAN_FLAG in switches:
        raise UserInputError(f"give {FILL_FLAG} or {PLAN_FLAG}, not both", hint=COVERAGE_USAGE)
    return CoverageArgs(
        suites=tuple(dict.fromkeys(suites)),
        model=flags.get("model"),
        target=int(target) if target else DEFAULT_TARGET,
        staging=STAGING_FLAG in switches,
        fill=FILL_FLAG in switches,
        plan=PLAN_FLAG in switches,
    )
