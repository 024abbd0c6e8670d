#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > relnotes/changelog.py <<'PY'
"""One release's entry of CHANGELOG.md."""


def format_entry(version: str, date: str, items: list[str]) -> str:
    """The entry: a `## <version> (<date>)` heading, then one `- <item>` line per distinct item, sorted."""
    lines = [f"## {version} ({date})"]
    lines += [f"- {item}" for item in sorted(set(items))]
    return "\n".join(lines) + "\n"
PY
