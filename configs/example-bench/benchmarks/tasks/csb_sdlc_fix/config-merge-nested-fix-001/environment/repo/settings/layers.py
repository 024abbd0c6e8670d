"""Resolve the effective settings of a service from its layers."""

from typing import Any

from settings.merge import deep_merge

DEFAULTS: dict[str, Any] = {
    "db": {"host": "localhost", "port": 5432, "pool": {"min": 1, "max": 10}},
    "log": {"level": "info", "json": False},
}


def resolve(file_layer: dict[str, Any], env_layer: dict[str, Any]) -> dict[str, Any]:
    """Effective settings: DEFAULTS, then the settings file, then environment overrides."""
    return deep_merge(deep_merge(DEFAULTS, file_layer), env_layer)
