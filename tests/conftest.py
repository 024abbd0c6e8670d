from __future__ import annotations

import sys
from pathlib import Path

# Test helper modules (harness, csb_tree) live beside the tests.
sys.path.insert(0, str(Path(__file__).resolve().parent))
