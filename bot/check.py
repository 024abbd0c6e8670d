"""What `serve` and `csb-bot check` both ask of a deployment: the CSB checkout and the Harbor."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.domain.errors import CsbBotError
from bot.settings import Settings


def checkout_problems(settings: Settings) -> list[str]:
    """Why CSB_REPO is not a CSB checkout the bot can read; `serve` refuses to start on any of them."""
    repo = settings.resolved_repo()
    if not repo.is_dir():
        return [f"CSB_REPO {repo} is not a directory"]
    try:
        catalog = Catalog(repo)
        suites = catalog.suites(catalog.default_task_file())
    except CsbBotError as exc:
        return [f"CSB checkout {repo}: {exc}"]
    return [] if suites else [f"CSB checkout {repo}: the default task file lists no tasks"]


def _first_task(settings: Settings) -> str | None:
    """The folder of the default task file's first task, relative to the checkout: what the probe runs."""
    tasks = Catalog(settings.resolved_repo()).load(None).tasks
    return tasks[0].path if tasks else None


def harbor_problems(settings: Settings) -> list[str]:
    harbor = settings.resolved_harbor()
    found = shutil.which(harbor) if "/" not in harbor else (harbor if Path(harbor).is_file() else None)
    if found is None:
        return [f"harbor executable not found: {harbor} (set CSB_HARBOR)"]
    if not shutil.which(found):
        return [f"harbor is not executable: {found}"]
    return []
