#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

retry = Path("netutil/retry.py")
old = "    return [base * 2 * i for i in range(attempts)]\n"
new = "    return [min(cap, base * 2**i) for i in range(attempts)]\n"
source = retry.read_text()
assert old in source, f"expected line not found: {old!r}"
retry.write_text(source.replace(old, new))
PY
