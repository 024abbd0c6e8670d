"""The words of `/csb cancel`, `/csb resume`, `/csb rerun` and `/csb (un)drain-account`, parsed once;
every error shows the usage.

Their usage lines and flags are the grammar's (`bot.domain.command_line`); the parsers live here
because `rerun --only` names CSB's failure fingerprints, which the domain does not know."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.csb.verdicts import CATALOG, IDS
from bot.csb.verdicts.fingerprints import RESULT_JSON_CORRUPT
from bot.domain.causes import OTHER_CATEGORY, OtherCause
from bot.domain.command_line import (
    CANCEL_USAGE,
    DRAIN_ACCOUNT_USAGE,
    DRAIN_FLAG,
    INVALID,
    ONLY_FLAG,
    RERUN_USAGE,
    RESUME_USAGE,
    STOP_FLAG,
    UNDRAIN_ACCOUNT_USAGE,
)
from bot.domain.errors import UserInputError
from bot.domain.limits import REASON_CHARS, RUN_NUMBER_DIGITS
from bot.domain.mrkdwn import clip
from bot.domain.outcome import LaneStatus
from bot.domain.states import RERUNNABLE_LANE_STATES
from bot.domain.verdict import Category

RERUNNABLE = RERUNNABLE_LANE_STATES
_DRAIN = DRAIN_FLAG.lstrip("-")  # typed with any dashes, Slack's `—` included
_ONLY = ONLY_FLAG.lstrip("-")
# What `--only` may name besides statuses: CSB's fingerprint ids and the bot's other causes (`zero_token`, …).
CAUSE_IDS = (*IDS, *(cause.value for cause in OtherCause))
# The causes a rerun as is can fix (category A): what the report's Rerun button reruns, never B, C or D.
CATEGORY_A = frozenset(
    [entry.id for entry in CATALOG if entry.category is Category.A]
    + [RESULT_JSON_CORRUPT]
    + [cause.value for cause, category in OTHER_CATEGORY.items() if category is Category.A]
)
_RUN_NUMBER = re.compile(r"#?[0-9]+")  # ASCII digits: `str.isdigit` accepts `²`, which int() refuses
_SHOWN = 40


@dataclass(frozen=True)
class CancelArgs:
    run_id: int
    drain: bool
    reason: str


@dataclass(frozen=True)
class RerunArgs:
    """The tasks to rerun: a lane ending in one of `only`, a lane whose cause is one of `causes` (as CSB's
    `rerun_failed.py --filter`), or, with `invalid`, a pair CSB's rules did not count."""

    run_id: int
    only: frozenset[LaneStatus]
    causes: frozenset[str] = frozenset()
    invalid: bool = False


def parse_cancel_args(text: str) -> CancelArgs:
    """`<run> [--drain] <reason…>`: the reason is required and recorded."""
    words = text.split()
    drain = any(word.lstrip("-—") == _DRAIN and word.startswith(("-", "—")) for word in words)
    rest = [word for word in words if not (word.startswith(("-", "—")) and word.lstrip("-—") == _DRAIN)]
    if not rest:
        raise UserInputError("which run? give its number", hint=CANCEL_USAGE)
    run_id = parse_run_id(rest[0], CANCEL_USAGE)
    reason = " ".join(rest[1:])
    if not reason:
        raise UserInputError("say why: the reason is recorded in the audit trail", hint=CANCEL_USAGE)
    check_reason(reason, CANCEL_USAGE)
    return CancelArgs(run_id=run_id, drain=drain, reason=reason)


def check_reason(reason: str, usage: str | None = None) -> str:
    """A cancel or reject reason is shown on the card and kept in the audit trail: bounded here."""
    if len(reason) > REASON_CHARS:
        raise UserInputError(
            f"the reason is {len(reason):,} characters long; the limit is {REASON_CHARS}", hint=usage
        )
    return reason


def parse_resume_args(text: str) -> int:
    """`<run>`: nothing else, so a stray word is not silently ignored."""
    words = text.split()
    if len(words) != 1:
        problem = "which run? give its number" if not words else f"unexpected `{_show(' '.join(words[1:]))}`"
        raise UserInputError(problem, hint=RESUME_USAGE)
    return parse_run_id(words[0], RESUME_USAGE)


def parse_rerun_args(text: str) -> RerunArgs:
    """`<run> [--only …]`: statuses, causes and `invalid`, mixed; without --only, the three statuses."""
    words = text.replace("=", " ").split()
    if not words:
        raise UserInputError("which run? give its number", hint=RERUN_USAGE)
    run_id = parse_run_id(words[0], RERUN_USAGE)
    rest = words[1:]
    if not rest:
        return RerunArgs(run_id=run_id, only=frozenset(RERUNNABLE))
    if len(rest) != 2 or rest[0].lstrip("-—") != _ONLY:
        raise UserInputError(f"unexpected `{_show(' '.join(rest))}`", hint=RERUN_USAGE)
    valid = {status.value: status for status in RERUNNABLE}
    picked = [part.strip().lower() for part in rest[1].split(",") if part.strip()]
    wrong = [part for part in picked if part not in valid and part not in CAUSE_IDS and part != INVALID]
    if wrong or not picked:
        raise UserInputError(
            f"`{ONLY_FLAG}` takes {', '.join(valid)}, `{INVALID}` or a cause: {', '.join(CAUSE_IDS)} "
            f"(comma separated); got `{_show(rest[1])}`",
            hint=RERUN_USAGE,
        )
    return RerunArgs(
        run_id=run_id,
        only=frozenset(valid[part] for part in picked if part in valid),
        causes=frozenset(part for part in picked if part in CAUSE_IDS),
        invalid=INVALID in picked,
    )


@dataclass(frozen=True)
class DrainAccountArgs:
    name: str
    stop: bool


_STOP = STOP_FLAG.lstrip("-")
ACCOUNT_NAME_CHARS = 500  # a home's folder name, or its whole path


def parse_drain_account_args(text: str) -> DrainAccountArgs:
    """`<name> [--stop]`: one account, and whether its running lanes are stopped and retried elsewhere."""
    words = text.split()
    flags = [word for word in words if word.startswith(("-", "—"))]
    wrong = [flag for flag in flags if flag.lstrip("-—") != _STOP]
    if wrong:
        raise UserInputError(
            f"unknown flag `{_show(wrong[0])}`; only `{STOP_FLAG}`", hint=DRAIN_ACCOUNT_USAGE
        )
    names = [word for word in words if word not in flags]
    return DrainAccountArgs(name=_account_name(names, DRAIN_ACCOUNT_USAGE), stop=bool(flags))


def parse_undrain_account_args(text: str) -> str:
    return _account_name(text.split(), UNDRAIN_ACCOUNT_USAGE)


def _account_name(words: list[str], usage: str) -> str:
    if len(words) != 1:
        problem = (
            "which account? give its name" if not words else f"expected one account, got {len(words)} words"
        )
        raise UserInputError(problem, hint=usage)
    if len(words[0]) > ACCOUNT_NAME_CHARS:
        raise UserInputError(f"an account name has at most {ACCOUNT_NAME_CHARS} characters", hint=usage)
    return words[0]


def parse_run_id(word: str, usage: str) -> int:
    """`12` or `#12`, in ASCII digits and at most `RUN_NUMBER_DIGITS` long; anything else says so."""
    if not _RUN_NUMBER.fullmatch(word):
        raise UserInputError(f"expected a run number (digits 0-9), got `{_show(word)}`", hint=usage)
    digits = word.lstrip("#")
    if len(digits) > RUN_NUMBER_DIGITS:
        raise UserInputError(
            f"a run number has at most {RUN_NUMBER_DIGITS} digits; got one of {len(digits):,}", hint=usage
        )
    return int(digits)


def _show(text: str) -> str:
    text = text.replace("`", "'") or "nothing"
    return clip(text, _SHOWN)
