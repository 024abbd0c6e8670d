"""`csb-bot check`: everything the bot needs before it can serve, each problem on one line."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.csb.harbor_probe import probe_harbor
from bot.domain.errors import CsbBotError
from bot.domain.redact import Redactor
from bot.executors.base import ProbeStatus
from bot.executors.registry import check_executor
from bot.settings import BotConfig, Settings, load_settings


def run_checks() -> tuple[list[str], list[str]]:
    """The problems (none means ready) and notes on what was found: the Harbor and whether it takes the
    lane command, and what the executor's own check finds (the Ray head, when lanes run on Ray). All
    are redacted of every secret the bot holds: a probe's output may quote one."""
    try:
        settings = load_settings()
    except CsbBotError as exc:
        return [str(exc)], []
    problems: list[str] = []
    try:
        config = settings.load_config()
    except CsbBotError as exc:
        problems.append(str(exc))
        config = BotConfig()
    checkout = checkout_problems(settings)
    problems += checkout
    harbor = _check_harbor(settings)
    problems += harbor
    notes: list[str] = []
    if not harbor:
        task = None if checkout else _first_task(settings)
        probe = probe_harbor(settings.launch_config(config, os.environ), task)
        problems += probe.problems
        notes += probe.notes
    try:
        choice = settings.executor(config)
    except CsbBotError as exc:
        problems.append(str(exc))
    else:
        for found in asyncio.run(check_executor(choice)):
            (problems if found.status is ProbeStatus.FAIL else notes).append(found.message)
    redact = Redactor.from_env(os.environ, settings.secret_values(config))
    return [redact(line) for line in problems], [redact(line) for line in notes]


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


def _first_task(settings: Settings) -> str | None:
    """The folder of the default task file's first task, relative to the checkout: what the probe runs."""
    tasks = Catalog(settings.resolved_repo()).load(None).tasks
    return tasks[0].path if tasks else None


def _check_harbor(settings: Settings) -> list[str]:
    harbor = settings.resolved_harbor()
    found = shutil.which(harbor) if "/" not in harbor else (harbor if Path(harbor).is_file() else None)
    if found is None:
        return [f"harbor executable not found: {harbor} (set CSB_HARBOR)"]
    if not shutil.which(found):
        return [f"harbor is not executable: {found}"]
    return []
