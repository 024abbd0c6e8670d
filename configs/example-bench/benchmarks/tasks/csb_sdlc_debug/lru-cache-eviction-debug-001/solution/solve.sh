#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

lru = Path("cachekit/lru.py")
fixes = {
    "        return self._data.get(key, default)\n": (
        "        if key not in self._data:\n"
        "            return default\n"
        "        self._data.move_to_end(key)\n"
        "        return self._data[key]\n"
    ),
    "        self._data[key] = value\n": "        self._data[key] = value\n        self._data.move_to_end(key)\n",
}
source = lru.read_text()
for old, new in fixes.items():
    assert old in source, f"expected line not found: {old!r}"
    source = source.replace(old, new)
lru.write_text(source)
PY
