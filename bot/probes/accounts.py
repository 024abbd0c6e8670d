"""Claude account homes and their tokens, as lanes will find them: homes matching `account_homes`, each
with a token that has at least CSB's 5 minutes left. None found: lanes run with the bot's own HOME."""

from __future__ import annotations

import os
from dataclasses import dataclass

from bot.domain.clock import SystemClock
from bot.domain.words import plural
from bot.engine.accounts import PICK_MIN_MINUTES, discover_homes, token_minutes
from bot.probes.base import Line, ProbeContext, fail, note, ok


@dataclass(frozen=True)
class AccountsProbe:
    name: str = "accounts"
    timeout_sec: float = 10.0

    async def run(self, context: ProbeContext) -> list[Line]:
        pattern = context.config.engine.account_homes
        home = context.environ.get("HOME", os.path.expanduser("~"))
        homes = discover_homes(pattern, home)
        if not homes:
            return [note(f"no account home matches {pattern}: lanes run with the bot's own HOME")]
        now = SystemClock().now()
        minutes = {path: token_minutes(path, now) for path in homes}
        live = [path for path, left in minutes.items() if left is not None and left >= PICK_MIN_MINUTES]
        dead = [os.path.basename(path) for path in homes if path not in live]
        if not live:
            return [fail(f"none of {plural(len(homes), 'account home')} has a live token: {', '.join(dead)}")]
        text = f"{plural(len(live), 'account home')} with a live token"
        if dead:
            return [ok(text), note(f"no live token (lanes avoid them): {', '.join(dead)}")]
        return [ok(text)]
