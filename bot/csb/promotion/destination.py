"""Where a run folder goes: `promote_run.py`'s destination and collision rule.

`runs/official/_raw/<run>` when `_raw` exists, else `runs/official/<run>`. When that already exists the
run is skipped ("Already exists in official"), or with `--force` placed at `<run>__promoted_<stamp>`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.csb.promotion.layout import OFFICIAL, RAW
from bot.domain.promotion import Destination


def destination(repo: Path, folder: str, *, force: bool, now: datetime) -> Destination:
    base = f"{OFFICIAL}/{RAW}" if (repo / OFFICIAL / RAW).is_dir() else OFFICIAL
    path = f"{base}/{folder}"
    if not (repo / path).exists():
        return Destination(folder=folder, path=path)
    if not force:
        return Destination(folder=folder, path=path, collision=True)
    return Destination(
        folder=folder, path=f"{path}{now.strftime('__promoted_%Y%m%d_%H%M%S')}", forced_suffix=True
    )
