"""The words of `/csb help` and `/csb help run`, as Slack mrkdwn.

`run_help` is generated from `RunParams` and the flag table of `command_line`, so a new field, a
changed default or a new enum member shows up in help without anyone editing this file.
"""

from __future__ import annotations

from collections.abc import Collection

from bot.domain.command_line import (
    POSITIONAL_FIELD,
    RUN_EXAMPLE,
    RUN_FLAGS,
    SUBCOMMANDS,
    TASKS_FLAG,
    USAGE,
    Flag,
    default_text,
    subcommand,
    value_kind,
)
from bot.domain.limits import REASON_CHARS
from bot.domain.mrkdwn import clip, escape
from bot.domain.slack_limits import MAX_SECTION_TEXT
from bot.domain.spec import RunParams

# What each subcommand does; its short form comes from the grammar (`command_line.GRAMMAR`).
_SUBCOMMAND_LINES: dict[str, str] = {
    "run": "ask for a paired baseline + MCP run; it starts once approved (`--tasks id,id`: just those tasks)",
    "help": "this list, or the flags of `run`",
    "suites": "the suite keys and task counts in the CSB checkout",
    "status": "queued and running runs, or one run's progress",
    "cancel": (
        "stop a run (or, with `--drain`, start no more lanes); "
        f"the reason, at most {REASON_CHARS} characters, is recorded"
    ),
    "resume": "a paused run starts lanes again, once what failed is fixed",
    "rerun": "a new paired run over a run's failed, errored and timed-out "
    "tasks; `--only` picks statuses, causes (`api_rate_limit,zero_token`) or `invalid` pairs",
    "audit": "who asked for, approved and cancelled what, and when",
    "accounts": "the Claude accounts lanes run under: token time left, lanes running, 5-hour and 7-day "
    "utilisation from CSB's usage cache, drains, and CSB's own verdict",
    "drain-account": "(admins) no new lane starts on the account; `--stop` also stops its running lanes "
    "and retries them elsewhere",
    "undrain-account": "(admins) the account takes new lanes again",
    "promote": "a promotion card for a finished staging run: CSB's gates, the MANIFEST diff, quarantine "
    "candidates and destination; approving it moves the run to runs/official step by step "
    "(`--dry-run`: only show it to you; `--quarantine`: set those tasks aside; `--force`: bypass the gates)",
    "official": "the official results in the MANIFEST, per suite and config, and who approved the last "
    "promotion",
    "compare": "A − B task by task: pass rates with 95 % intervals, McNemar, mean reward, cost; "
    "regressions, fixes, new errors",
    "runs": "finished runs, newest first, with their numbers",
    "coverage": "valid runs per selected task and lane against a target (default 3), the tasks with none, "
    "and CSB's variance waves; `--staging` counts finished staging runs too; its Fill gaps and Plan variance "
    "buttons (or `--fill`, `--plan`) ask for the runs",
    "spend": "a month's recorded lane cost (default this UTC month) by category, model, suite and config, "
    "against the budgets, with a chart",
}


def help_overview(available: Collection[str] = SUBCOMMANDS) -> str:
    """One line per subcommand this deployment serves, in the order `SUBCOMMANDS` lists them."""
    shown = [name for name in SUBCOMMANDS if name in available]
    # Escaped: Slack would take `<run>` for a link, even in backticks.
    lines = ["*CodeScaleBench bot*", *(f"• {escape(_subcommand_line(name))}" for name in shown)]
    lines.append("`/csb help run` for the flags.")
    return "\n".join(lines)


def _subcommand_line(name: str) -> str:
    return f"`{subcommand(name).short}` — {_SUBCOMMAND_LINES[name]}"


def run_help(defaults_note: str | None = None) -> str:
    """The flags of `/csb run`; `defaults_note` adds what this deployment allows (suites, configs, bounds)."""
    lines = [
        "*`/csb run`*: nothing starts until someone approves the card.",
        f"`{escape(USAGE)}`",
        *(_field_line(field) for field in RunParams.model_fields),
        f"• `{TASKS_FLAG} ID[,ID…]` — _task ids, separated by commas_. A quick rerun of just these tasks of "
        "the task file (of `--suite`'s suite when given; any case), at most `quick_rerun_max_tasks` of "
        "them (20 unless this deployment sets it): the bot writes them to a selection file in CSB's "
        "shape under `configs/harnesses/`. Default: every task.",
        "`--flag=value` works too; `—flag` (Slack's dash) counts as `--flag`. Quote paths with spaces.",
        f"Example: `{RUN_EXAMPLE}`",
    ]
    text = "\n".join(lines)
    if defaults_note:
        room = MAX_SECTION_TEXT - len(text) - 1
        note = clip(defaults_note, room)
        text = f"{text}\n{note}"
    return text


def _field_line(field: str) -> str:
    info = RunParams.model_fields[field]
    spellings = " | ".join(_spelling(flag) for flag in RUN_FLAGS if flag.field == field)
    if field == POSITIONAL_FIELD:
        spellings = f"`[{field}]` | {spellings}"
    return f"• {spellings} — _{value_kind(field)}_. {info.description} Default: {default_text(field)}."


def _spelling(flag: Flag) -> str:
    names = "`" + (flag.name if flag.is_switch else f"{flag.name} {flag.metavar}") + "`"
    if flag.aliases:
        names += " (alias " + ", ".join(f"`{alias}`" for alias in flag.aliases) + ")"
    return names
