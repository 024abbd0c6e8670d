"""The first probe: the settings from the environment and the bot's TOML file, every problem on its own line.

The other probes need settings to start from, so a setting that fails validation is reported and replaced
by its default (a required token by a stand-in that is never sent), and the probes go on: one bad variable
must not hide the checkout's or the database's problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from bot.domain.errors import CsbBotError
from bot.probes.base import Line, ProbeContext, ProbeReport, fail, ok
from bot.settings import BotConfig, Settings, settings_problems

NAME = "settings"
# Stand-ins for required secrets that failed: the probes that would send them see them in `unusable`.
_STAND_INS: dict[str, Any] = {"slack_bot_token": "xoxb-unusable", "slack_signing_secret": "unusable"}


def load_context(environ: Mapping[str, str]) -> tuple[ProbeContext, ProbeReport]:
    lines: list[Line] = []
    settings, unusable = _settings(lines)
    config = BotConfig()
    if settings is not None:
        try:
            config = settings.load_config()
        except CsbBotError as exc:
            lines.append(fail(str(exc)))
    if not lines:
        lines.append(ok("settings and config file are valid"))
    context = ProbeContext(settings=settings, config=config, environ=environ, unusable=unusable)
    return context, ProbeReport(NAME, tuple(lines))


def _settings(lines: list[Line]) -> tuple[Settings | None, frozenset[str]]:
    try:
        return Settings(), frozenset()
    except ValidationError as exc:
        lines.extend(fail(problem) for problem in settings_problems(exc))
        fields = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
    overrides = {name: _fallback(name) for name in fields if name in Settings.model_fields}
    try:
        settings = Settings(**overrides)
    except ValidationError:
        return None, frozenset(name.upper() for name in fields)
    return settings, frozenset(name.upper() for name in fields)


def _fallback(name: str) -> Any:
    if name in _STAND_INS:
        return _STAND_INS[name]
    return Settings.model_fields[name].get_default(call_default_factory=True)
