"""The `/csb` grammar, in one place: the command's name, its subcommands with their usage lines, the
arguments of each, and the parser of the text typed after `/csb` (into a subcommand and, for `run`,
into `RunParams`). The router, `/csb help`, the parsers of `cancel`, `resume` and `rerun`, and every
error's usage line read it here (tests/test_one_place.py keeps it so).

The flags are only a spelling layer over `RunParams.model_fields`: the model owns each parameter's
type, default, bounds and description, so the parser, `/csb help run` and the error messages all
read one source and cannot disagree. Only the syntax is checked here; whether a suite key or a
config name exists is decided later against the CSB checkout.
"""

from __future__ import annotations

import re
import types
import typing
import unicodedata
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.domain.errors import UserInputError
from bot.domain.limits import RUN_NUMBER_DIGITS
from bot.domain.mrkdwn import clip
from bot.domain.shell_words import split_words
from bot.domain.spec import FIELD_CHARS, Mode, RunParams

COMMAND = "/csb"  # the slash command, as manifest.yml declares it
COMMAND_USAGE = "/csb <subcommand> [arguments]"

_HELP_ALIASES = frozenset({"--help", "-h", "?"})
# Slack clients turn `--` into an em or en dash and straight quotes into curly ones; spaces pasted
# from documents arrive as no-break spaces, which a shell (and `split_words`) would keep inside a word.
_DASH_RUN = re.compile(r"(?<!\S)[-\u2014\u2013]*[\u2014\u2013][-\u2014\u2013]*")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_ODD_SPACE = re.compile(r"[^\S\n\t\r ]")
_DIGITS = re.compile(r"[0-9]+")
_MAX_DIGITS = RUN_NUMBER_DIGITS  # int() refuses very long digit strings; no sane count is this long
_BARE = "the bare suite key"
_SHOWN_CHARS = 40  # echoed user text is cut so an error reply stays far below Slack's limits


class CommandLine(BaseModel):
    """A subcommand and the (normalised) text after it, still unparsed."""

    model_config = ConfigDict(frozen=True)

    name: str
    args: str = ""


@dataclass(frozen=True)
class Flag:
    """One `/csb run` flag: how it is spelled and which `RunParams` field it sets.

    A flag without `metavar` is a switch and stores `sets` in its field. `in_usage=False` keeps a
    second spelling of something already in `USAGE` out of that one line; help still lists it.
    """

    name: str
    field: str
    metavar: str | None = None
    sets: Any = True
    aliases: tuple[str, ...] = ()
    in_usage: bool = True

    @property
    def is_switch(self) -> bool:
        return self.metavar is None


RUN_FLAGS: tuple[Flag, ...] = (
    Flag("--model", "model", "M"),
    # `--benchmark` is what CSB's harness calls it; usage shows the bare `[suite]` form instead.
    Flag("--suite", "suite", "KEY", aliases=("--benchmark",), in_usage=False),
    Flag("--suite-file", "suite_file", "PATH"),
    Flag("--selection-file", "selection_file", "PATH"),
    Flag("--baseline-only", "mode", sets=Mode.BASELINE_ONLY),
    Flag("--full-only", "mode", sets=Mode.FULL_ONLY),
    Flag("--mode", "mode", "MODE", in_usage=False),
    Flag("--full-config", "full_config", "NAME"),
    Flag("--parallel", "parallel", "N"),
    Flag("--category", "category", "CATEGORY"),
    Flag("--dry-run", "dry_run"),
    Flag("--allow-unpaired", "allow_unpaired"),
)
POSITIONAL_FIELD = "suite"  # `/csb run csb_sdlc_fix` is `--suite csb_sdlc_fix`
_EXCLUSIVE: tuple[tuple[str, str, str], ...] = (("suite_file", "selection_file", "task file"),)
_BY_SPELLING: dict[str, Flag] = {s: f for f in RUN_FLAGS for s in (f.name, *f.aliases)}


def _value_type(field: str) -> Any:
    """The field's annotation without its `| None`."""
    annotation = RunParams.model_fields[field].annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _enum_values(field: str) -> tuple[str, ...]:
    kind = _value_type(field)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return tuple(str(member.value) for member in kind)
    return ()


def _lower_bound(field: str) -> int:
    for constraint in RunParams.model_fields[field].metadata:
        bound = getattr(constraint, "ge", None)
        if isinstance(bound, int):
            return bound
    return 0


def _usage_item(flag: Flag) -> str:
    if flag.is_switch:
        return flag.name
    values = _enum_values(flag.field)
    return f"{flag.name} {'|'.join(values) if values else flag.metavar}"


def _usage() -> str:
    """One bracket per field, its flags as alternatives, in the model's field order."""
    groups = [
        " | ".join(_usage_item(f) for f in RUN_FLAGS if f.field == field and f.in_usage)
        for field in RunParams.model_fields
    ]
    return "/csb run [suite] " + " ".join(f"[{group}]" for group in groups if group)


TASKS_FLAG = "--tasks"  # `/csb run --tasks id,id`: named tasks of the task file, not a `RunParams` field
USAGE = f"{_usage()} [{TASKS_FLAG} ID,…]"  # `/csb run`'s
HELP_USAGE = "/csb help [run]"
STATUS_USAGE = "/csb status [run]"
CANCEL_USAGE = "/csb cancel <run> [--drain] <reason>"
RESUME_USAGE = "/csb resume <run>"
AUDIT_USAGE = "/csb audit <run>"
RERUN_USAGE = "/csb rerun <run> [--only failed,errored,timeout|<fingerprint>,…|invalid]"
PROMOTE_USAGE = "/csb promote <run number> [--quarantine] [--force] [--dry-run]"
OFFICIAL_USAGE = "/csb official [suite]"
COMPARE_USAGE = "/csb compare <run|official> <run|official> [--lane baseline|mcp|both]"
RUNS_USAGE = "/csb runs [--suite S] [--model M] [--last N]"
COVERAGE_USAGE = "/csb coverage [suite…] [--model M] [--target N] [--staging] [--fill | --plan]"
SPEND_USAGE = "/csb spend [YYYY-MM]"
DRAIN_ACCOUNT_USAGE = "/csb drain-account <name> [--stop]"
UNDRAIN_ACCOUNT_USAGE = "/csb undrain-account <name>"
STOP_FLAG = "--stop"  # `/csb drain-account`: also stop its running lanes and retry them elsewhere
DRAIN_FLAG = "--drain"  # `/csb cancel`: start no more lanes, let the running ones end
ONLY_FLAG = "--only"  # `/csb rerun`: which lanes' tasks to run again
INVALID = "invalid"  # `--only invalid`: the pairs CSB's curation rules left out of the statistics
RUN_EXAMPLE = "/csb run csb_sdlc_fix --model anthropic/claude-sonnet-4-6 --parallel 8"


@dataclass(frozen=True)
class Subcommand:
    """One subcommand: the usage line every input error about it ends with, and the short form
    `/csb help` lists, which is the usage unless that is too long for one line of help."""

    name: str
    usage: str
    synopsis: str = ""

    @property
    def short(self) -> str:
        return self.synopsis or self.usage


GRAMMAR: tuple[Subcommand, ...] = (  # in the order `/csb help` lists them
    Subcommand("run", USAGE, synopsis="/csb run [suite] [flags]"),
    Subcommand("help", HELP_USAGE),
    Subcommand("suites", "/csb suites"),
    Subcommand("status", STATUS_USAGE),
    Subcommand("cancel", CANCEL_USAGE),
    Subcommand("resume", RESUME_USAGE),
    Subcommand("rerun", RERUN_USAGE, synopsis="/csb rerun <run> [--only …]"),
    Subcommand("audit", AUDIT_USAGE),
    Subcommand("accounts", "/csb accounts"),
    Subcommand("drain-account", DRAIN_ACCOUNT_USAGE),
    Subcommand("undrain-account", UNDRAIN_ACCOUNT_USAGE),
    Subcommand("promote", PROMOTE_USAGE),
    Subcommand("official", OFFICIAL_USAGE),
    Subcommand("compare", COMPARE_USAGE),
    Subcommand("runs", RUNS_USAGE),
    Subcommand("coverage", COVERAGE_USAGE),
    Subcommand("spend", SPEND_USAGE),
)
SUBCOMMANDS: tuple[str, ...] = tuple(sub.name for sub in GRAMMAR)
_BY_NAME: dict[str, Subcommand] = {sub.name: sub for sub in GRAMMAR}


def subcommand(name: str) -> Subcommand:
    return _BY_NAME[name]


def usage_of(text: str) -> str:
    """The usage line of the subcommand `text` starts with; the command's own for anything else."""
    words = text.split(maxsplit=1)
    found = _BY_NAME.get(words[0].lower() if words else "")
    return found.usage if found else COMMAND_USAGE


def is_usage(hint: str) -> bool:
    """Whether an error's hint is a usage line (shown as the usage) or advice (shown as it is)."""
    return hint.startswith(COMMAND)


def parse_command(text: str) -> CommandLine:
    """Split off the subcommand; empty text asks for help, the friendliest answer to a bare `/csb`."""
    parts = _normalise(text).strip().split(None, 1)
    if not parts:
        return CommandLine(name="help")
    name = parts[0].casefold()
    args = parts[1].strip() if len(parts) > 1 else ""
    if name in _HELP_ALIASES:
        name = "help"
    if name not in SUBCOMMANDS:
        raise UserInputError(
            f"unknown subcommand `{_show(parts[0])}`{_did_you_mean(name, SUBCOMMANDS) or '.'} "
            f"Subcommands: {_listing(SUBCOMMANDS)}.",
            hint=COMMAND_USAGE,
        )
    return CommandLine(name=name, args=args)


@dataclass(frozen=True)
class RunLine:
    """`/csb run`'s text parsed: the parameters, and the task ids `--tasks` named (none: every task)."""

    params: RunParams
    tasks: tuple[str, ...] = ()


def parse_run_args(text: str, *, max_parallel: int | None = None) -> RunParams:
    """Turn the text after `/csb run` into `RunParams`, or a `UserInputError` saying how to fix it;
    `--tasks` is refused here: it is `parse_run_line`'s."""
    line = parse_run_line(text, max_parallel=max_parallel)
    if line.tasks:
        raise _error(f"`{TASKS_FLAG}` is not taken here")
    return line.params


def parse_run_line(text: str, *, max_parallel: int | None = None) -> RunLine:
    """`parse_run_args`, and `--tasks id[,id…]` (ids as typed, checked against the task file later)."""
    given: dict[str, tuple[str, Any]] = {}  # field -> (how the user spelled it, value)
    tasks: tuple[str, ...] | None = None
    tokens = _split(_normalise(text))
    i = 0
    while i < len(tokens):
        token = tokens[i]
        spelled, eq, listed = token.partition("=")
        if spelled.casefold() == TASKS_FLAG:
            if tasks is not None:
                raise _error(f"`{TASKS_FLAG}` given twice; list every task in one, separated by commas")
            if not eq:
                i += 1
                listed = tokens[i] if i < len(tokens) and not tokens[i].startswith("--") else ""
            while listed.endswith(",") and i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                i += 1  # `--tasks a, b`: a space after a comma still lists the next id
                listed += tokens[i]
            tasks = _task_ids(listed)
        elif token.startswith("-"):
            spelling, flag, inline = _lookup(token)
            if flag.is_switch:
                if inline is not None:
                    raise _error(f"`{spelling}` is a switch and takes no value")
                value: Any = flag.sets
            elif inline is not None:
                value = _convert(flag, spelling, inline, max_parallel)
            else:
                i += 1
                raw = _next_value(tokens, i, spelling, flag, max_parallel)
                value = _convert(flag, spelling, raw, max_parallel)
            _record(given, flag.field, f"`{spelling}`", value)
        else:
            _record(given, POSITIONAL_FIELD, f"{_BARE} `{_show(token)}`", _bare_key(token))
        i += 1
    _check_exclusive(given)
    return RunLine(_build(given), tasks or ())


def _task_ids(raw: str) -> tuple[str, ...]:
    """`a,b, c` → `("a", "b", "c")`, each once whatever its case (ids match so), in the order typed."""
    first: dict[str, str] = {}
    for part in raw.split(","):
        first.setdefault(part.strip().casefold(), part.strip())
    first.pop("", None)
    ids = tuple(first.values())
    if not ids:
        raise _error(f"`{TASKS_FLAG}` needs task ids: `{TASKS_FLAG} ID[,ID…]`")
    for task_id in ids:
        _reject_invisible(f"`{TASKS_FLAG}`", task_id)
    return ids


def value_kind(field: str, max_parallel: int | None = None) -> str:
    """What a field accepts, in words; used by errors and by `/csb help run`."""
    values = _enum_values(field)
    if values:
        return "one of " + _listing(values)
    kind = _value_type(field)
    if kind is bool:
        return "a switch"
    if kind is int:
        low = _lower_bound(field)
        if max_parallel is not None:
            return f"a whole number from {low} to {max_parallel}"
        return f"a whole number, {low} or more"
    limit = FIELD_CHARS.get(field)
    return f"text of at most {limit} characters" if limit else "text"


def default_text(field: str) -> str:
    """The default as help shows it; a None default is named by the field's `unset` metadata."""
    info = RunParams.model_fields[field]
    default = info.default
    if default is None:
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        return str(extra.get("unset", "not set"))
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, Enum):
        return f"`{default.value}`"
    return f"`{default}`"


def _normalise(text: str) -> str:
    """Undo what Slack clients do to typed text; idempotent, so normalising twice is harmless."""
    text = _ODD_SPACE.sub(" ", text.translate(_QUOTES))
    return _DASH_RUN.sub("--", text)


def _split(text: str) -> list[str]:
    try:
        return split_words(text)
    except ValueError as exc:
        if "escaped" in str(exc):
            raise _error("the text ends with a lone backslash `\\`; remove it or quote it") from exc
        raise _error("unbalanced quotes: every `\"` or `'` needs a closing one") from exc


def _lookup(token: str) -> tuple[str, Flag, str | None]:
    """Find the flag a token names; returns the spelling used and any `=value` part."""
    spelling, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
    spelling = spelling.casefold()
    flag = _BY_SPELLING.get(spelling)
    if spelling in _HELP_ALIASES:
        raise _error("`/csb help run` lists the flags of `/csb run`")
    if flag is None:
        hint = _did_you_mean(spelling, (*_BY_SPELLING, TASKS_FLAG))
        if not hint:
            hint = f"; flags: {_listing((*_BY_SPELLING, TASKS_FLAG))}."
        raise _error(f"unknown flag `{_show(spelling)}`{hint}")
    return spelling, flag, inline if eq else None


def _next_value(tokens: list[str], i: int, spelling: str, flag: Flag, max_parallel: int | None) -> str:
    # A following `--flag` means the value was forgotten; `-5` is still a (bad) value for `--parallel`.
    if i >= len(tokens) or tokens[i].startswith("--"):
        raise _missing(spelling, flag, max_parallel)
    return tokens[i]


def _missing(spelling: str, flag: Flag, max_parallel: int | None) -> UserInputError:
    kind = value_kind(flag.field, max_parallel)
    tail = "" if kind.startswith("text") else f", {kind}"
    return _error(f"`{spelling}` needs a value: `{spelling} {flag.metavar}`{tail}")


def _convert(flag: Flag, spelling: str, raw: str, max_parallel: int | None) -> Any:
    """Check one value's syntax and bounds, naming the flag and what it accepts when it is wrong."""
    if raw == "":
        raise _missing(spelling, flag, max_parallel)
    if _value_type(flag.field) is str:
        _check_text(f"`{spelling}`", flag.field, raw)
    else:
        _reject_invisible(f"`{spelling}`", raw)
    bad = f"`{spelling}` must be {value_kind(flag.field, max_parallel)}; got `{_show(raw)}`"
    values = _enum_values(flag.field)
    if values:
        if raw.casefold() not in values:
            raise _error(bad)
        return raw.casefold()
    if _value_type(flag.field) is int:
        if not _DIGITS.fullmatch(raw) or len(raw) > _MAX_DIGITS:
            raise _error(bad)
        number = int(raw)
        if number < _lower_bound(flag.field) or (max_parallel is not None and number > max_parallel):
            raise _error(bad)
        return number
    return raw


def _bare_key(token: str) -> str:
    if token == "":
        raise _error(f"{_BARE} is empty; drop the empty quotes")
    _check_text(_BARE, POSITIONAL_FIELD, token)
    return token


def text_problem(field: str, value: str) -> str | None:
    """What is wrong with a text value of a run parameter, however it was typed (`/csb run` or the Edit
    modal, so both refuse the same): longer than its limit, or holding a control or invisible character
    (NUL, a newline, C1 controls, ANSI escapes, U+202E), which is never intended and would reach folder
    names, argv and the card. None when the value may be used. The length is checked first: it is O(1)."""
    limit = FIELD_CHARS.get(field)
    if limit is not None and len(value) > limit:
        return f"is {len(value):,} characters long; the limit is {limit}"
    return _invisible(value)


def _invisible(value: str) -> str | None:
    for char in value:
        if unicodedata.category(char).startswith("C"):
            return f"contains an invisible or control character (U+{ord(char):04X})"
    return None


def _check_text(what: str, field: str, value: str) -> None:
    problem = text_problem(field, value)
    if problem:
        raise _error(f"{what} {problem}")


def _reject_invisible(what: str, value: str) -> None:
    """A number or a choice is checked for them too, so the error names the character, not the value."""
    problem = _invisible(value)
    if problem:
        raise _error(f"{what} {problem}")


def _record(given: dict[str, tuple[str, Any]], field: str, spelled: str, value: Any) -> None:
    """Store one field's value; a second value for the same field is ambiguous, so it is refused."""
    if field not in given:
        given[field] = (spelled, value)
        return
    first = given[field][0]
    if first.startswith(_BARE) and spelled.startswith(_BARE):
        raise _error(
            f"only one bare suite key is allowed; got `{_show(given[field][1])}` and `{_show(value)}`"
        )
    if first == spelled:
        raise _error(f"{spelled} given twice")
    raise _error(f"{first} and {spelled} both set the {_label(field)}; give one")


def _check_exclusive(given: dict[str, tuple[str, Any]]) -> None:
    for one, other, label in _EXCLUSIVE:
        if one in given and other in given:
            raise _error(f"{given[one][0]} and {given[other][0]} both name the {label}; give one")


def _build(given: dict[str, tuple[str, Any]]) -> RunParams:
    """Validate through the model itself; its errors are translated, never let out."""
    try:
        return RunParams.model_validate({field: value for field, (_, value) in given.items()})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        spelled = given[field][0] if field in given else "a value"
        raise _error(f"{spelled}: {err['msg']}") from None


def _label(field: str) -> str:
    return field.replace("_", " ")


def _did_you_mean(word: str, choices: tuple[str, ...]) -> str:
    close = nearest(word, choices)
    return f"; did you mean `{close}`?" if close else ""


def nearest(word: str, choices: tuple[str, ...]) -> str | None:
    """The choice fewest typing slips away (a swapped pair of letters is one slip, so `--modle` is
    `--model`, not `--mode`); ties go to the choice of the same length. None when nothing is close."""
    allowed = max(1, len(word.lstrip("-")) // 3)
    # A choice whose length differs by more than `allowed` is that many slips away at least: it is not
    # scored, so a 40,000-character word costs nothing here instead of seconds of the event loop.
    scored = [
        (_slips(word, choice), abs(len(choice) - len(word)), choice)
        for choice in choices
        if abs(len(choice) - len(word)) <= allowed
    ]
    if scored and (best := min(scored))[0] <= allowed:
        return best[2]
    started = [choice for choice in choices if choice.startswith(word) and len(word.lstrip("-")) >= 3]
    return started[0] if len(started) == 1 else None  # `--selection` for `--selection-file`


def _slips(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[len(b)]


def _listing(names: tuple[str, ...]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _show(value: object) -> str:
    """User text as echoed in a reply: cut short, and without backticks that would break the code span."""
    text = str(value).replace("`", "'")
    return clip(text, _SHOWN_CHARS)


def _error(message: str) -> UserInputError:
    return UserInputError(message, hint=USAGE)
