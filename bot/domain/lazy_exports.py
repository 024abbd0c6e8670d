"""A package's offered names, each imported from its module on first use (PEP 562).

A package `__init__` that imported every module it offers made importing any one module of the package
import them all: `bot.slack.scopes`, a list of strings, started the whole Slack app, and every
`csb-bot` process paid for it at start. The package still lists its names in `__all__` and imports
them under `TYPE_CHECKING` for the type checker; this loads each at run time.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(package: str, homes: Mapping[str, Sequence[str]]) -> Callable[[str], object]:
    """The package's `__getattr__`: `homes` maps each module to the names the package takes from it."""
    home_of = {name: module for module, names in homes.items() for name in names}
    # A name its package's module shares (`bot.csb.lane_env`, the function and the module) cannot load
    # lazily: importing the module sets the package's attribute to the module. Import such a name in
    # the package itself.
    modules = {found.name for found in pkgutil.iter_modules(sys.modules[package].__path__)}
    if shadowed := sorted(modules & home_of.keys()):
        raise ValueError(f"{package}: {', '.join(shadowed)} also name modules; import them eagerly")

    def load(name: str) -> object:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # asked once; later reads are plain attributes
        return value

    return load
