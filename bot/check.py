"""`csb-bot check`: everything the bot needs before it can serve, each problem on one line."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.domain.errors import CsbBotError
from bot.settings import Settings, load_settings


def run_checks() -> list[str]:
    """An empty list means ready."""
    try:
        settings = load_settings()
    except CsbBotError as exc:
        return [str(exc)]
    problems: list[str] = []
    try:
        settings.load_config()
    except CsbBotError as exc:
        problems.append(str(exc))
    problems += checkout_problems(settings)
    problems += _check_harbor(settings)
    return problems


def serve_mode() -> str:
    """Which way `serve` will take Slack's requests, read off the tokens (checked by the settings: an
    app-level token starts with xapp-, a bot token with xoxb-, and each is refused in the other's place)."""
    if load_settings().slack_app_token is None:
        return "serve will use HTTP: SLACK_APP_TOKEN is unset, so Slack posts to /slack/events"
    return "serve will use Socket Mode: SLACK_APP_TOKEN is an app-level token (xapp-); no public URL needed"


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


def _check_harbor(settings: Settings) -> list[str]:
    harbor = settings.resolved_harbor()
    found = shutil.which(harbor) if "/" not in harbor else (harbor if Path(harbor).is_file() else None)
    if found is None:
        return [f"harbor executable not found: {harbor} (set CSB_HARBOR)"]
    if not shutil.which(found):
        return [f"harbor is not executable: {found}"]
    return []
