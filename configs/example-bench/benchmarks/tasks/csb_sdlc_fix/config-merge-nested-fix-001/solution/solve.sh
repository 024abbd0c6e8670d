#!/usr/bin/env bash
# Reference solution -- deliberately PARTIAL, like a typical agent patch for this task: it makes
# the merge recursive (bug 1) but still merges in place, so the defaults are still mutated and
# results still share dicts with the layers (bug 2). Expected verifier reward: 2 of 4 checks = 0.5.
# Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > settings/merge.py <<'PY'
"""Merge one settings layer over another."""

from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``override`` applied on top; nested tables merge key by key."""
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_merge(base[key], value)
        else:
            base[key] = value
    return base
PY
