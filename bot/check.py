"""`csb-bot check`: everything the bot needs before it can serve, each problem on one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.csb.harbor_probe import HarborProbe, probe_harbor
from bot.domain.errors import CsbBotError
from bot.settings import Settings, load_settings


def run_checks() -> HarborProbe:
    """Problems (none means ready) and notes: the Harbor found, and whether it takes the lane command."""
    try:
        settings = load_settings()
    except CsbBotError as exc:
        return HarborProbe([], [str(exc)])
    problems: list[str] = []
    try:
        settings.load_config()
    except CsbBotError as exc:
        problems.append(str(exc))
    checkout = checkout_problems(settings)
    harbor = _check_harbor(settings)
    if harbor:
        return HarborProbe([], problems + checkout + harbor)
    task = None if checkout else _first_task(settings)
    probe = probe_harbor(settings.resolved_harbor(), settings.resolved_repo(), os.environ, task)
    return HarborProbe(probe.notes, problems + checkout + probe.problems)


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
    tasks = Catalog(settings.resolved_repo()).load().tasks
    return tasks[0].path if tasks else None


def _check_harbor(settings: Settings) -> list[str]:
    harbor = settings.resolved_harbor()
    found = shutil.which(harbor) if "/" not in harbor else (harbor if Path(harbor).is_file() else None)
    if found is None:
        return [f"harbor executable not found: {harbor} (set CSB_HARBOR)"]
    if not shutil.which(found):
        return [f"harbor is not executable: {found}"]
    return []
