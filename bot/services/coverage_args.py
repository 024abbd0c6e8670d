"""The words of `/csb coverage`, parsed once; every error shows the usage."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.domain.command_line import COVERAGE_USAGE
from bot.domain.coverage import DEFAULT_TARGET, MAX_TARGET
from bot.domain.errors import UserInputError
from bot.domain.slack_limits import MAX_BUTTON_VALUE
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


def coverage_words(args: CoverageArgs) -> str:
    """The words after `/csb coverage` that `parse_coverage_args` turns back into `args`: what a Fill gaps
    or Plan variance button carries, so a click asks exactly what typing the flag would."""
    words = list(args.suites)
    if args.model:
        words += ["--model", args.model]
    words += ["--target", str(args.target)]
    words += [
        flag
        for flag, on in ((STAGING_FLAG, args.staging), (FILL_FLAG, args.fill), (PLAN_FLAG, args.plan))
        if on
    ]
    return " ".join(words)


def button_values(args: CoverageArgs, *, fill: bool, plan: bool) -> tuple[str, ...]:
    """The values of the answer's buttons (`--fill`, then `--plan`, for those offered); none when a value
    would pass Slack's limit for a button's value (many suites named): the flags still work then."""
    values = tuple(
        coverage_words(replace(args, fill=is_fill, plan=not is_fill))
        for is_fill, offered in ((True, fill), (False, plan))
        if offered
    )
    return values if all(len(v) <= MAX_BUTTON_VALUE for v in values) else ()
