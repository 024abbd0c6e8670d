"""Service name -> (port, owning team)."""

from typing import NamedTuple


class Registration(NamedTuple):
    port: int
    owner: str


_REGISTRY: dict[str, Registration] = {}


def register(name: str, port: int, owner: str) -> None:
    """Announce a service; called once, at import time, by the module that serves it."""
    _REGISTRY[name] = Registration(port, owner)


def lookup(name: str) -> Registration | None:
    """The registration of ``name``, if its module has been imported."""
    return _REGISTRY.get(name)
