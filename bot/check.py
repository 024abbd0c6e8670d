"""What `serve` and `csb-bot check` both ask of a deployment: the CSB checkout, the Harbor, the Ray head."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.domain.errors import CsbBotError
from bot.rayjobs.jobs_api import RayJobsClient, RayJobsError
from bot.settings import ExecutorChoice, Settings

# `check` is run by hand: a head that does not answer in this long is reported as not answering.
RAY_CHECK_TIMEOUT_SEC = 5.0


async def ray_head_report(choice: ExecutorChoice) -> tuple[str | None, str | None]:
    """One line on the Ray head: a problem (it does not answer, or refuses) or a note with its version.
    The token is sent, never shown."""
    address = str(choice.ray_address)
    async with RayJobsClient(address, choice.ray_token, timeout_sec=RAY_CHECK_TIMEOUT_SEC) as ray:
        try:
            version = await ray.version()
        except RayJobsError as exc:
            return str(exc), None
    return None, f"Ray head {ray.address} answers: Ray {version.ray_version}"


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
