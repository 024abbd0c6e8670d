"""The words of `/csb compare` and `/csb runs`, parsed once; every error shows the usage."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.command_line import COMPARE_USAGE, RUNS_USAGE
from bot.domain.compare import LaneChoice
from bot.domain.errors import UserInputError
from bot.services.control_args import parse_run_id

OFFICIAL = "official"
DEFAULT_LAST = 10
MAX_LAST = 50  # one reply's worth of lines


@dataclass(frozen=True)
class CompareArgs:
    a: int | None  # a run number; None: official
    b: int | None
    lanes: LaneChoice = LaneChoice.CONFIG


@dataclass(frozen=True)
class RunsArgs:
    suite: str | None = None
    model: str | None = None
    last: int = DEFAULT_LAST


def parse_compare_args(text: str) -> CompareArgs:
    words, flags = split_flags(text, COMPARE_USAGE, {"lane"})
    if len(words) != 2:
        raise UserInputError(
            f"give two sides (run numbers or `{OFFICIAL}`), got {len(words)}", hint=COMPARE_USAGE
        )
    lane = flags.get("lane")
    choices = [LaneChoice.BASELINE.value, LaneChoice.MCP.value, LaneChoice.BOTH.value]
    if lane is not None and lane not in choices:
        raise UserInputError(f"`--lane` takes {', '.join(choices)}; got `{lane[:40]}`", hint=COMPARE_USAGE)
    a, b = (_side(word) for word in words)
    if a == b:
        same = OFFICIAL if a is None else f"run #{a}"
        raise UserInputError(f"{same} compared with itself: give two different sides", hint=COMPARE_USAGE)
    return CompareArgs(a=a, b=b, lanes=LaneChoice(lane) if lane else LaneChoice.CONFIG)


def parse_runs_args(text: str) -> RunsArgs:
    words, flags = split_flags(text, RUNS_USAGE, {"suite", "model", "last"})
    if words:
        raise UserInputError(f"unexpected `{' '.join(words)[:40]}`", hint=RUNS_USAGE)
    last = flags.get("last")
    if last is not None and not (last.isascii() and last.isdigit() and 1 <= int(last) <= MAX_LAST):
        raise UserInputError(
            f"`--last` takes a number from 1 to {MAX_LAST}; got `{last[:40]}`", hint=RUNS_USAGE
        )
    return RunsArgs(
        suite=flags.get("suite"), model=flags.get("model"), last=int(last) if last else DEFAULT_LAST
    )


def _side(word: str) -> int | None:
    return None if word.lower() == OFFICIAL else parse_run_id(word, COMPARE_USAGE)


def split_flags(text: str, usage: str, known: set[str]) -> tuple[list[str], dict[str, str]]:
    """Bare words, and `--flag value` (or `--flag=value`) pairs of the known flags."""
    tokens = text.replace("=", " ").split()
    words: list[str] = []
    flags: dict[str, str] = {}
    while tokens:
        token = tokens.pop(0)
        if not token.startswith(("-", "—", "–")):
            words.append(token)
            continue
        name = token.lstrip("-—–").lower()
        if name not in known:
            listing = ", ".join(f"--{flag}" for flag in sorted(known))
            raise UserInputError(f"unknown flag `{token[:40]}`; this command takes {listing}", hint=usage)
        if not tokens or tokens[0].startswith(("-", "—", "–")):
            raise UserInputError(f"`--{name}` needs a value", hint=usage)
        flags[name] = tokens.pop(0)
    return words, flags
