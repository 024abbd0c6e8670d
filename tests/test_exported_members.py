"""Each package says what it offers; this pins those names so a change to the surface is deliberate."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "bot.domain",
    "bot.csb",
    "bot.store",
    "bot.services",
    "bot.engine",
    "bot.executors",
    "bot.slack",
    "bot.slack.views",
    "bot.slack.inbound.listeners",
    "bot.playground",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_exists_and_is_listed_once(name: str) -> None:
    package = importlib.import_module(name)
    exported = package.__all__
    assert len(exported) == len(set(exported))
    assert sorted(exported) == sorted(n for n in exported if hasattr(package, n))
    public = {
        n
        for n, v in vars(package).items()
        if not n.startswith("_") and getattr(v, "__module__", "").startswith(name)
    }
    assert public <= set(exported) | {n for n in public if n in ("annotations",)}
