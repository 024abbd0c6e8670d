"""The end-to-end flows run on one database each: the choice is stable, spreads over both databases,
and names modules that exist (a renamed module would otherwise run on both again, silently)."""

from __future__ import annotations

import ast
from pathlib import Path

from one_database import DATABASES, ONE_DATABASE_MODULES, chosen_database

TESTS = Path(__file__).resolve().parent


def _db_tests(module: str) -> list[str]:
    """The module's test functions that take `db_url` (and so would run on both databases)."""
    tree = ast.parse((TESTS / f"{module}.py").read_text())
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
        and any(arg.arg == "db_url" for arg in node.args.args)
    ]


def test_every_listed_module_exists_and_has_tests_on_a_database() -> None:
    for module in sorted(ONE_DATABASE_MODULES):
        assert (TESTS / f"{module}.py").is_file(), module
        assert _db_tests(module), f"{module} has no test taking db_url: take it off the list"


def test_the_choice_is_stable_and_ignores_only_the_database() -> None:
    a = chosen_database("test_x", "test_y", {"db_url": "sqlite", "hold": "move"})
    assert a == chosen_database("test_x", "test_y", {"db_url": "postgresql", "hold": "move"})
    assert a in DATABASES
    others = {chosen_database("test_x", "test_y", {"db_url": "sqlite", "hold": h}) for h in "abcdefgh"}
    assert others == set(DATABASES)  # another parameter is another test, chosen on its own


def test_both_databases_get_the_flows() -> None:
    choices = [chosen_database(m, t, {}) for m in ONE_DATABASE_MODULES for t in _db_tests(m)]
    assert choices.count("sqlite") >= len(choices) // 3
    assert choices.count("postgresql") >= len(choices) // 3
