#!/usr/bin/env bash
# Reference solution. Runs with the task's code as the working directory (like tests/test.sh).
set -euo pipefail
cat > textkit/slug.py <<'PY'
"""URL slugs for article titles."""

import re
import unicodedata


def slugify(title: str) -> str:
    """Return a lowercase, hyphen-separated, ASCII-only slug for ``title``."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
PY
