#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > ingest/rows.py <<'PY'
"""Turn CSV text (RFC 4180: quoted fields may hold commas and doubled quotes) into rows."""

import csv
import io


def split_row(line: str) -> list[str]:
    """Fields of one CSV line, with quoting removed."""
    return next(csv.reader([line.rstrip("\r\n")]))


def parse(text: str) -> list[list[str]]:
    """All non-empty rows of ``text``."""
    return [row for row in csv.reader(io.StringIO(text)) if row]
PY
