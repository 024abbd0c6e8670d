"""The tree's dependency rule, checked by reading imports: domain/ uses nothing of the bot, and
the engine never talks to Slack (the database is the only bus between them)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[1] / "bot"


def imported_modules(package: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted((BOT / package).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                base = node.module if node.level == 0 else f"bot.{package}.{node.module}"
                names.add(base)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[str(path.relative_to(BOT))] = names
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("domain", ("bot.csb", "bot.store", "bot.engine", "bot.slack", "bot.services", "bot.playground")),
        ("csb", ("bot.store", "bot.engine", "bot.slack", "bot.services", "bot.playground")),
        ("store", ("bot.engine", "bot.slack", "bot.services", "bot.playground")),
        ("engine", ("bot.slack", "bot.playground")),
        ("services", ("bot.slack", "bot.playground", "bot.engine")),
    ],
)
def test_dependencies_point_down(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = {
        file: sorted(name for name in names if name.startswith(forbidden))
        for file, names in imported_modules(package).items()
    }
    assert {file: names for file, names in offenders.items() if names} == {}
