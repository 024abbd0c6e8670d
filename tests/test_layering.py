"""The tree's dependency rule, checked by reading the source: dependencies point down, domain/ does no
I/O, the engine never speaks Slack (the database is the only bus between them), and every import is
absolute, so the rule reads each one by its full name. The store's tables stay in the store: the rest of
bot/ is handed its frozen records.

Every package and top-level module under bot/ is found on disk: a new one fails
`test_every_part_of_the_tree_has_a_place` until it is given a place in `MAY_IMPORT`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[1] / "bot"
ANYTHING = None  # the composition root and the tools built on it may import every part

# What each part of bot/ may import of the others (besides itself), lowest layer first.
MAY_IMPORT: dict[str, frozenset[str] | None] = {
    "domain": frozenset(),
    "default_paths": frozenset(),  # plain paths, so `csb-bot --help` shows them without the settings
    # LaunchConfig; each executor's settings; the default paths
    "settings": frozenset({"domain", "default_paths", "csb", "executors"}),
    "csb": frozenset({"domain"}),
    "store": frozenset({"domain"}),
    "rayjobs": frozenset({"domain"}),
    "executors": frozenset({"domain", "csb", "rayjobs"}),
    "check": frozenset({"domain", "csb", "executors", "settings"}),
    # `csb-bot check`'s probes look at every dependency as the parts that use it do.
    "probes": frozenset({"domain", "csb", "executors", "store", "engine", "slack", "settings", "check"}),
    "services": frozenset({"domain", "csb", "store", "settings"}),
    "engine": frozenset({"domain", "csb", "executors", "store", "services", "settings"}),
    "slack": frozenset({"domain", "csb", "store", "services", "settings"}),
    "heap": frozenset(),  # the startup heap frozen out of full collections, once serving
    "listen": frozenset({"domain", "settings", "heap"}),
    "wiring": ANYTHING,
    "server": ANYTHING,
    "playground": ANYTHING,
    "cli": ANYTHING,
    "__main__": ANYTHING,
    "__init__": frozenset(),
}

SLACK_MODULES = ("slack_sdk", "slack_bolt", "bot.slack")
# Modules whose use is I/O: processes, databases, the network, the file system.
IO_MODULES = (
    "subprocess",
    "asyncio.subprocess",
    "sqlalchemy",
    "sqlmodel",
    "aiosqlite",
    "aiohttp",
    "socket",
    "shutil",
    "tempfile",
    "glob",
    "io",
    "urllib",
    "http",
    "slack_sdk",
    "slack_bolt",
)
OS_FILE_ACCESS = frozenset(
    {
        "open", "remove", "unlink", "listdir", "scandir", "walk", "stat", "lstat", "mkdir", "makedirs",
        "rename", "replace", "rmdir", "removedirs", "chmod", "chown", "link", "symlink", "readlink",
        "truncate", "fdopen", "popen", "system", "spawnl", "spawnv", "execv", "execve", "fork",
        "exists", "isfile", "isdir", "islink", "getsize", "getmtime", "realpath", "access",
    }
)  # fmt: skip
# Methods of pathlib.Path that touch the disk (pure path arithmetic stays allowed).
PATH_IO = frozenset(
    {
        "read_text", "read_bytes", "write_text", "write_bytes", "exists", "is_file", "is_dir",
        "is_symlink", "iterdir", "glob", "rglob", "mkdir", "unlink", "rmdir", "touch", "stat",
        "lstat", "chmod", "resolve", "samefile", "readlink", "symlink_to", "hardlink_to", "owner",
        "expanduser", "absolute", "open",
    }
)  # fmt: skip
OPEN_CALLS = frozenset({"open", "io.open", "os.open", "builtins.open", "os.fdopen", "os.popen"})


@dataclass(frozen=True)
class Use:
    """One import or call, as `file:line what`."""

    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.what}"


def tree_parts() -> list[str]:
    """Every package (a folder with `__init__.py`) and top-level module under bot/, read from disk."""
    packages = [p.parent.name for p in BOT.glob("*/__init__.py")]
    modules = [p.stem for p in BOT.glob("*.py")]
    return sorted(packages + modules)


def part_files(part: str) -> list[Path]:
    folder = BOT / part
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [BOT / f"{part}.py"]


def _dotted(node: ast.expr) -> str | None:
    """`os.path.exists` for an attribute chain on a name; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


@cache
def _parsed(source: str) -> ast.Module:
    """Each file is read by a dozen checks: parsed once (the trees are only walked, never changed)."""
    return ast.parse(source)


def imports(source: str, file: str = "<source>") -> Iterator[Use]:
    """Every module imported, by its full name (`from a import b` gives `a` and `a.b`)."""
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Use(file, node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield Use(file, node.lineno, node.module)
            for alias in node.names:
                yield Use(file, node.lineno, f"{node.module}.{alias.name}")


def relative_imports(source: str, file: str = "<source>") -> Iterator[Use]:
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            yield Use(file, node.lineno, f"from {'.' * node.level}{node.module or ''} import ...")


def slack_imports(source: str, file: str = "<source>") -> Iterator[Use]:
    return (use for use in imports(source, file) if _within(use.what, SLACK_MODULES))


def io_uses(source: str, file: str = "<source>") -> Iterator[Use]:
    """I/O modules imported, `os` file access, `open(...)` and pathlib calls that touch the disk."""
    for use in imports(source, file):
        if _within(use.what, IO_MODULES) or _is_os_file_access(use.what):
            yield use
    for node in ast.walk(_parsed(source)):  # called or only named (`read = path.read_text`)
        if isinstance(node, ast.Attribute) and node.attr in PATH_IO:
            yield Use(file, node.lineno, f"….{node.attr}")
            continue
        name = (_dotted(node) if isinstance(node, ast.Name | ast.Attribute) else None) or ""
        if name in OPEN_CALLS or _is_os_file_access(name) or name.startswith("asyncio.create_subprocess"):
            yield Use(file, node.lineno, name)


def _is_os_file_access(name: str) -> bool:
    return name.startswith("os.") and name.rsplit(".", 1)[1] in OS_FILE_ACCESS


def _within(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in names)


def _uses(part: str, find: Callable[[str, str], Iterator[Use]]) -> list[str]:
    return [
        str(use) for path in part_files(part) for use in find(path.read_text(), str(path.relative_to(BOT)))
    ]


# -- the tree ---------------------------------------------------------------------------------------


def test_every_part_of_the_tree_has_a_place() -> None:
    assert tree_parts() == sorted(MAY_IMPORT)


@pytest.mark.parametrize("part", tree_parts())
def test_dependencies_point_down(part: str) -> None:
    allowed = MAY_IMPORT.get(part, frozenset())
    if allowed is ANYTHING:
        return
    parts = set(tree_parts()) - {part} - allowed
    offenders = [
        str(use)
        for path in part_files(part)
        for use in imports(path.read_text(), str(path.relative_to(BOT)))
        if any(_within(use.what, (f"bot.{other}",)) for other in parts)
    ]
    assert offenders == [], f"bot/{part} may import only {sorted(allowed)} of bot/"


@pytest.mark.parametrize("part", tree_parts())
def test_imports_are_absolute(part: str) -> None:
    assert _uses(part, relative_imports) == []


def test_the_engine_never_speaks_slack() -> None:
    assert _uses("engine", slack_imports) == []


def test_domain_does_no_io() -> None:
    assert _uses("domain", io_uses) == []


# -- module names ------------------------------------------------------------------------------------

# A module name used in two folders must be one idea seen from two layers, so that following the name
# down the tree leads to the same thing; a name that means two things (`retry.py` for a lane's retry and
# for the Web API client's) sends a reader to the wrong file. Each repeat allowed is listed with where
# it lives and why; any other repeat, or a third file under a listed name, fails.
SAME_IDEA: dict[str, tuple[frozenset[str], str]] = {
    "accounts.py": (
        frozenset(
            {
                "engine/accounts.py",
                "probes/accounts.py",
                "services/accounts.py",
                "slack/views/accounts.py",
                "store/accounts.py",
            }
        ),
        "Claude account homes: the slot pool that hands them to lanes, their check, `/csb accounts` and "
        "the drain (service and words), their table",
    ),
    "approvals.py": (frozenset({"services/approvals.py", "store/approvals.py"}), "the approval gate"),
    "base.py": (
        frozenset({"executors/base.py", "probes/base.py"}),
        "what a member of the folder is: the interface each executor and each probe satisfies",
    ),
    "causes.py": (
        frozenset({"domain/causes.py", "slack/views/causes.py"}),
        "failures by cause, and their words",
    ),
    "cli.py": (frozenset({"cli.py", "playground/cli.py"}), "`csb-bot`, and its `playground` subcommand"),
    "compare.py": (
        frozenset({"domain/compare.py", "services/compare.py", "slack/views/compare.py"}),
        "comparing two runs: CSB's rules and statistics, the service that gathers both sides, their words",
    ),
    "coverage.py": (
        frozenset({"domain/coverage.py", "services/coverage.py", "slack/views/coverage.py"}),
        "coverage and variance: CSB's planner rules, the service that counts runs, their words",
    ),
    "errors.py": (
        frozenset({"domain/errors.py", "slack/errors.py"}),
        "the one error tree, and the one place its errors become words",
    ),
    "estimate.py": (
        frozenset({"domain/estimate.py", "slack/views/estimate.py"}),
        "what a run will cost and take, from finished lanes, and its words on the card and the report",
    ),
    "events.py": (
        frozenset({"domain/events.py", "slack/views/events.py"}),
        "a run's events, and their words",
    ),
    "spend.py": (
        frozenset({"domain/spend.py", "services/spend.py", "slack/views/spend.py", "store/spend.py"}),
        "money spent: a month summed by dimension, the card's estimate and budget, their words, the sums",
    ),
    "home.py": (
        frozenset({"services/home.py", "slack/inbound/listeners/home.py", "slack/views/home.py"}),
        "App Home: who looks at it, the event that opens it, the tab",
    ),
    "integrity.py": (
        frozenset({"domain/integrity.py", "slack/views/integrity.py"}),
        "CSB's curation rules, and the report's words for them",
    ),
    "lease.py": (frozenset({"engine/lease.py", "store/lease.py"}), "the timer lease: its heartbeat, its row"),
    "orphans.py": (
        frozenset({"engine/orphans.py", "probes/orphans.py", "store/orphans.py"}),
        "marked lane processes no running lane owns: the engine's look, its check, their rows",
    ),
    "pacing.py": (
        frozenset({"slack/outbound/pacing.py", "store/pacing.py"}),
        "Slack's rate budgets: how delivery keeps them, the rows that count them",
    ),
    "payloads.py": (
        frozenset({"playground/payloads.py", "slack/inbound/payloads.py"}),
        "Slack's payloads from both ends: the stand-in builds them as Slack does, the bot reads them",
    ),
    "promotion.py": (
        frozenset({"domain/promotion.py", "services/promotion.py", "slack/views/promotion.py"}),
        "a promotion to official: its typed findings, the service that gathers them, their words",
    ),
    "registry.py": (
        frozenset({"executors/registry.py", "probes/registry.py"}),
        "the one list of the folder's members: executors by kind, probes in order",
    ),
    "requests.py": (frozenset({"services/requests.py", "store/requests.py"}), "run requests"),
    "run_control.py": (
        frozenset({"services/run_control.py", "slack/inbound/listeners/run_control.py"}),
        "cancel, resume and rerun: the state changes, and the buttons that ask for them",
    ),
    "socket_mode.py": (
        frozenset({"playground/socket_mode.py", "slack/inbound/socket_mode.py"}),
        "Slack's Socket Mode from both ends: the stand-in serves it, the bot connects",
    ),
}


def repeated_names(paths: list[str]) -> dict[str, frozenset[str]]:
    """Module file names found under more than one folder (packages' `__init__.py` aside)."""
    by_name: dict[str, set[str]] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        if name != "__init__.py":
            by_name.setdefault(name, set()).add(path)
    return {name: frozenset(found) for name, found in by_name.items() if len(found) > 1}


def unexplained(repeats: dict[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    return {
        name: found for name, found in repeats.items() if found != SAME_IDEA.get(name, (frozenset(), ""))[0]
    }


def module_paths() -> list[str]:
    return sorted(str(path.relative_to(BOT)) for path in BOT.rglob("*.py"))


def test_a_module_name_means_one_thing() -> None:
    assert unexplained(repeated_names(module_paths())) == {}


def test_every_listed_repeat_is_still_there() -> None:
    assert sorted(repeated_names(module_paths())) == sorted(SAME_IDEA)


def test_the_name_check_catches_a_new_repeat() -> None:
    planted = [*module_paths(), "slack/outbound/retry.py", "engine/retry.py", "csb/events.py"]
    assert unexplained(repeated_names(planted)) == {
        "retry.py": frozenset({"slack/outbound/retry.py", "engine/retry.py"}),
        "events.py": frozenset({"domain/events.py", "slack/views/events.py", "csb/events.py"}),
    }


# -- inside bot/slack/ --------------------------------------------------------------------------------

SLACK = BOT / "slack"
# What each part of bot/slack/ may import of the others (besides itself). Receiving and delivering meet
# only in the database and in one call: after its ack a listener kicks the notifier. The views write
# the words both sides show, and know neither; a button's value is written as the listener reads it.
SLACK_MAY_IMPORT: dict[str, frozenset[str] | None] = {
    "ids": frozenset(),
    "errors": frozenset(),
    "scopes": frozenset(),
    "drawing": frozenset(),  # the one worker process charts are drawn in, for both sides
    "views": frozenset({"ids", "inbound.payloads"}),
    "outbound": frozenset({"ids", "views", "drawing"}),
    # `/csb compare` uploads its chart itself, and words a refused upload as delivery does
    "inbound": frozenset({"ids", "errors", "views", "drawing", "outbound.notifier", "outbound.delivery"}),
    "app": ANYTHING,  # assembles the Bolt app from both sides
    "__init__": ANYTHING,
}


def slack_parts() -> list[str]:
    packages = [p.parent.name for p in SLACK.glob("*/__init__.py")]
    return sorted(packages + [p.stem for p in SLACK.glob("*.py")])


def slack_crossings(part: str, source: str, file: str = "<source>") -> list[str]:
    """The imports of another part of bot/slack/ that `part` may not make."""
    allowed = SLACK_MAY_IMPORT.get(part, frozenset())
    if allowed is ANYTHING:
        return []
    others = [f"bot.slack.{other}" for other in slack_parts() if other != part]
    permitted = tuple(f"bot.slack.{name}" for name in allowed)
    return [
        str(use)
        for use in imports(source, file)
        if _within(use.what, tuple(others)) and not _within(use.what, permitted)
    ]


def test_every_part_of_slack_has_a_place() -> None:
    assert slack_parts() == sorted(SLACK_MAY_IMPORT)


@pytest.mark.parametrize("part", slack_parts())
def test_receiving_and_delivering_stay_apart(part: str) -> None:
    folder = SLACK / part
    files = sorted(folder.rglob("*.py")) if folder.is_dir() else [SLACK / f"{part}.py"]
    found = [
        crossing
        for path in files
        for crossing in slack_crossings(part, path.read_text(), str(path.relative_to(BOT)))
    ]
    allowed = sorted(SLACK_MAY_IMPORT[part] or ())
    assert found == [], f"bot/slack/{part} may import only {allowed} of bot/slack/"


def test_the_slack_rule_catches_a_crossing() -> None:
    planted = (
        "from bot.slack.inbound.payloads import SlashCommand\n"  # delivering reads what comes in: refused
        "from bot.slack.views.home import home_tab\n"
        "from bot.slack.outbound.notifier import Notifier\n"
    )
    assert [use.split()[0] for use in slack_crossings("outbound", planted)] == ["<source>:1"] * 2
    listener = (
        "from bot.slack.outbound.notifier import Notifier\n"  # the kick after the ack: allowed
        "from bot.slack.outbound.posting import Poster\n"
    )
    assert [use.split()[0] for use in slack_crossings("inbound", listener)] == ["<source>:2"] * 2


# -- the checks catch what they claim ----------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "import subprocess",
        "from asyncio import subprocess",
        "import asyncio.subprocess",
        "from sqlalchemy import select",
        "import aiohttp",
        "from os import remove",
        "import os\nos.listdir('.')",
        "import os\nos.path.exists('x')",
        "import asyncio\nasyncio.create_subprocess_exec('ls')",
        "open('x').read()",
        "from pathlib import Path\nPath('x').read_text()",
        "def f(p):\n    return p.exists()",
        "def f(p):\n    return p.read_text",
        "reader = open",
    ],
)
def test_io_in_domain_is_found(source: str) -> None:
    assert list(io_uses(source)), source


@pytest.mark.parametrize(
    "source",
    [
        "import os\nos.environ.get('X')",
        "from pathlib import PurePosixPath\nPurePosixPath('a') / 'b'",
        "import json\njson.loads('{}')",
        "'a'.replace('a', 'b')",
    ],
)
def test_pure_code_is_not_flagged(source: str) -> None:
    assert list(io_uses(source)) == [], source


def test_relative_and_slack_imports_are_found() -> None:
    assert [u.what for u in relative_imports("from . import a\nfrom ..b import c")] == [
        "from . import ...",
        "from ..b import ...",
    ]
    source = "from bot.slack.outbound.notifier import Notifier\nimport slack_sdk.models\nimport slacker"
    assert [u.line for u in slack_imports(source)] == [1, 1, 2]


# -- the executor ------------------------------------------------------------------------------------

# Only the registry names a concrete executor: the rest of bot/ knows it as `bot.executors.base.Executor`,
# and finds it by its kind through `bot.executors.registry`.
LOCAL_EXECUTOR_NAMERS = frozenset({"executors/registry.py", "executors/local.py"})
RAY_EXECUTOR_NAMERS = frozenset({"executors/registry.py", "executors/ray.py"})
# Ray's Jobs API is the Ray executor's business, and its check's (the head, its version, its nodes).
RAY_API_USERS = frozenset({"executors/ray.py", "executors/ray_check.py"})
# Outside bot/executors/, only these of its modules are named: the seam, the registry, and the lane
# process marker and host the engine's lease and launch share with the local executor.
EXECUTOR_SHARED_MODULES = frozenset(
    {"bot.executors.base", "bot.executors.registry", "bot.executors.processes"}
)
# Finding and signalling lane processes: the local executor's business alone in the engine (CSB's
# preflight scripts are the bot's own children, stopped by csb/).
LANE_PROCESS_CALLS = frozenset({"find_marked", "markers_supported", "killpg"})
LANE_PROCESS_HANDLERS = frozenset({"executors/local.py", "executors/processes.py"})


@cache
def names_used(source: str, file: str = "<source>") -> tuple[Use, ...]:
    """Every name, attribute and imported module or member, as written (listed once per file: five
    checks read every file's names)."""
    names = [
        Use(file, node.lineno, node.id if isinstance(node, ast.Name) else node.attr)
        for node in ast.walk(_parsed(source))
        if isinstance(node, ast.Name | ast.Attribute)
    ]
    return (*names, *imports(source, file))


def _named(wanted: Callable[[str], bool], allowed: frozenset[str], under: str = ".") -> list[str]:
    return [
        str(use)
        for path in sorted((BOT / under).rglob("*.py"))
        if str(path.relative_to(BOT)) not in allowed
        for use in names_used(path.read_text(), str(path.relative_to(BOT)))
        if wanted(use.what)
    ]


def _is_module(name: str, module: str) -> bool:
    return name == module or name.startswith(f"{module}.")


def _is_local_executor(name: str) -> bool:
    return name.split(".")[-1] == "LocalExecutor" or _is_module(name, "bot.executors.local")


def test_only_the_registry_names_the_local_executor() -> None:
    assert _named(_is_local_executor, LOCAL_EXECUTOR_NAMERS) == []


def _is_ray_executor(name: str) -> bool:
    return name.split(".")[-1] == "RayExecutor" or _is_module(name, "bot.executors.ray")


def _is_ray_api(name: str) -> bool:
    return name == "bot.rayjobs" or name.startswith("bot.rayjobs.")


def test_only_the_registry_names_the_ray_executor() -> None:
    assert _named(_is_ray_executor, RAY_EXECUTOR_NAMERS) == []


def test_only_the_ray_executor_and_its_check_speak_to_ray() -> None:
    assert _named(_is_ray_api, RAY_API_USERS | _ray_package_files()) == []


def _ray_package_files() -> frozenset[str]:
    return frozenset(str(path.relative_to(BOT)) for path in (BOT / "rayjobs").rglob("*.py"))


def test_only_the_local_executor_finds_and_signals_lane_processes() -> None:
    def signals(name: str) -> bool:
        return name.split(".")[-1] in LANE_PROCESS_CALLS

    found = [
        use for under in ("engine", "executors") for use in _named(signals, LANE_PROCESS_HANDLERS, under)
    ]
    assert found == []


def _is_executor_module(name: str) -> bool:
    """A module of bot/executors/ other than the ones the rest of bot/ shares."""
    shared = any(_is_module(name, module) for module in EXECUTOR_SHARED_MODULES)
    return _is_module(name, "bot.executors") and name != "bot.executors" and not shared


def test_outside_its_folder_an_executor_is_found_by_its_kind_alone() -> None:
    """A new executor is its module(s) and one registration: nothing else of bot/ imports them."""
    inside = frozenset(str(path.relative_to(BOT)) for path in (BOT / "executors").rglob("*.py"))
    assert _named(_is_executor_module, inside) == []


def test_the_executor_checks_find_what_they_look_for() -> None:
    source = (
        "from bot.executors.local import LocalExecutor\nimport os\nos.killpg(1, 9)\n"
        "from bot.rayjobs.jobs_api import RayJobsClient\nfrom bot.executors.ray import RayExecutor"
    )
    names = [use.what for use in names_used(source)]
    assert any(_is_local_executor(name) for name in names)
    assert any(_is_ray_api(name) for name in names) and any(_is_ray_executor(name) for name in names)
    assert "killpg" in names
    kinds = "from bot.executors.ray_settings import RaySettings\nfrom bot.executors.base import Executor\n"
    assert [use.what for use in names_used(kinds) if _is_executor_module(use.what)] == [
        "bot.executors.ray_settings",
        "bot.executors.ray_settings.RaySettings",
    ]


# -- the store's records -----------------------------------------------------------------------------

# The table classes stay inside the store: the rest of bot/ is handed frozen records
# (`bot/store/records.py`) whose ids are never None and whose spec is parsed once.
TABLES_MODULE = "bot.store.models"


def table_uses(source: str, file: str = "<source>") -> Iterator[Use]:
    """Imports of the table classes, the guesses a nullable row id forces (`x.id or 0`, `assert x.id is
    not None`), and a request's spec parsed again (the record's `spec` is parsed)."""
    for use in imports(source, file):
        if _is_module(use.what, TABLES_MODULE):
            yield use
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and _is_id(node.values[0]):
            yield Use(file, node.lineno, "….id or …")
        elif isinstance(node, ast.Assert) and any(_is_id_none_check(n) for n in ast.walk(node.test)):
            yield Use(file, node.lineno, "assert ….id is not None")
        elif isinstance(node, ast.Attribute) and _dotted(node) == "RunSpec.model_validate_json":
            yield Use(file, node.lineno, "RunSpec.model_validate_json")


def _is_id(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "id"


def _is_id_none_check(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Compare)
        and _is_id(node.left)
        and isinstance(node.ops[0], ast.IsNot)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )


def test_outside_the_store_rows_are_records() -> None:
    found = [
        str(use)
        for path in sorted(BOT.rglob("*.py"))
        if path.relative_to(BOT).parts[0] != "store"
        for use in table_uses(path.read_text(), str(path.relative_to(BOT)))
    ]
    assert found == [], "import records from bot.store.records; their ids are never None"


@pytest.mark.parametrize(
    "source",
    [
        "from bot.store.models import Run",
        "from bot.store import models",
        "import bot.store.models",
        "def f(run):\n    return run.id or 0",
        "def f(request):\n    assert request.id is not None",
        "def f(made):\n    assert made is not None and made.id is not None",
        "def f(request):\n    return RunSpec.model_validate_json(request.spec_json)",
    ],
)
def test_a_row_leaking_out_of_the_store_is_found(source: str) -> None:
    assert list(table_uses(source)), source


@pytest.mark.parametrize(
    "source",
    [
        "from bot.store.records import Run",
        "from bot.store import runs",
        "def f(run):\n    return run.id",
        "def f(item):\n    assert item.run_id is not None",
        "def f(run):\n    return run.pid or 0",
        "def f(request):\n    return RequestChecks.model_validate_json(request.checks_json)",
    ],
)
def test_records_are_not_flagged(source: str) -> None:
    assert list(table_uses(source)) == [], source
