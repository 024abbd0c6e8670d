"""`/csb promote <run> [--force] [--quarantine] [--dry-run]`, parsed once, each flag checked."""

from __future__ import annotations

from dataclasses import dataclass

from bot.domain.command_line import PROMOTE_USAGE
from bot.domain.errors import UserInputError
from bot.services.control_args import parse_run_id

_FLAGS = ("force", "quarantine", "dry-run")


@dataclass(frozen=True)
class PromoteArgs:
    run_id: int
    force: bool = False  # CSB's bypass of promote_run.py's gates: an override approver must approve
    quarantine: bool = False  # set aside the tasks CSB's quarantine rule names, as part of the promotion
    dry_run: bool = False  # only show CSB's dry run, to the asker, with no card


def parse_promote_args(text: str) -> PromoteArgs:
    words = text.split()
    flags = [word for word in words if word.startswith(("-", "—"))]
    rest = [word for word in words if not word.startswith(("-", "—"))]
    if len(rest) != 1:
        problem = (
            "which run? give its number" if not rest else f"expected one run number, got {len(rest)} words"
        )
        raise UserInputError(problem, hint=PROMOTE_USAGE)
    names = [flag.lstrip("-—").lower() for flag in flags]
    wrong = [flag for flag, name in zip(flags, names, strict=True) if name not in _FLAGS]
    if wrong:
        raise UserInputError(
            f"unknown flag `{wrong[0][:40]}`; `/csb promote` takes --force, --quarantine and --dry-run",
            hint=PROMOTE_USAGE,
        )
    return PromoteArgs(
        run_id=parse_run_id(rest[0], PROMOTE_USAGE),
        force="force" in names,
        quarantine="quarantine" in names,
        dry_run="dry-run" in names,
    )
