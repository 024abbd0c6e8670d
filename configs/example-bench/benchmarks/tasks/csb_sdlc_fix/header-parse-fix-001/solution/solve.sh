#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > httpkit/headers.py <<'PY'
"""Parse one HTTP header line."""


def parse_header(line: str) -> tuple[str, str]:
    """`Name: value` → (name in lower case, value without surrounding whitespace)."""
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()
PY
