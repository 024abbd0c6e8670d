"""Merge one settings layer over another."""

from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` applied on top; nested tables merge key by key."""
    base.update(override)
    return base
