#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

pager = Path("listing/pager.py")
source = pager.read_text()
fixes = {
    "    return count // per_page\n": "    return -(-count // per_page)\n",
    "    start = page * per_page\n": "    start = (page - 1) * per_page\n",
}
for old, new in fixes.items():
    assert old in source, f"expected line not found: {old!r}"
    source = source.replace(old, new)
pager.write_text(source)
PY
