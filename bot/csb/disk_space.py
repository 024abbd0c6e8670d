"""Free disk where lanes write (the checkout's `runs/`), against CSB's `check-infra` thresholds: under
5 GB blocks a launch, under 20 GB is a warning (`df -BG --output=avail` on the checkout)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

BLOCK_GB = 5
RECOMMENDED_GB = 20
_GB = 1024**3  # df -BG counts in GiB


@dataclass(frozen=True)
class DiskSpace:
    where: Path
    free_gb: float

    @property
    def blocking(self) -> bool:
        return self.free_gb < BLOCK_GB

    @property
    def low(self) -> bool:
        return self.free_gb < RECOMMENDED_GB

    def describe(self) -> str:
        free = f"{self.free_gb:.1f} GB free under {self.where}"
        if self.blocking:
            return f"only {free}; CSB needs more than {BLOCK_GB} GB to launch"
        if self.low:
            return f"{free}; CSB recommends {RECOMMENDED_GB} GB"
        return free


def disk_space(repo: Path) -> DiskSpace:
    """Measured on `runs/` when it exists, else on the checkout (the same file system once created).
    OSError when neither can be read."""
    runs = repo / "runs"
    where = runs if runs.is_dir() else repo
    stats = os.statvfs(where)
    return DiskSpace(where=where, free_gb=stats.f_bavail * stats.f_frsize / _GB)
