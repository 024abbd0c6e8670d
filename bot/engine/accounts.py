"""Claude accounts and the global slot pool: which homes lanes run under, and how many lanes at once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Where CSB keeps its accounts and how their tokens are read: `bot.csb.account_homes`, named here too.
from bot.csb.account_homes import CREDENTIALS as CREDENTIALS
from bot.csb.account_homes import PICK_MIN_MINUTES as PICK_MIN_MINUTES
from bot.csb.account_homes import account_name as account_name
from bot.csb.account_homes import discover_homes as discover_homes
from bot.csb.account_homes import token_minutes as token_minutes
from bot.csb.account_homes import usable as usable
from bot.settings import EngineConfig
from bot.store.records import Account

MIN_SLOTS = 2  # both lanes of a pair start together, so a smaller pool would never start one
SESSIONS_PER_ACCOUNT = 6  # CSB's default parallel: this many lanes per ready account
DAYTONA_PARALLEL_CAP = 60  # CSB's DAYTONA_PARALLEL_TASK_CAP default …
DAYTONA_PARALLEL_MAX = 124  # … and its ceiling


@dataclass(frozen=True)
class AccountPool:
    homes: tuple[str, ...]  # the account homes found, or the bot's own HOME when none were
    slots: int  # lanes at once across all runs
    per_account: int  # lanes at once on one account
    fallback: bool = False  # no account home was found: lanes run with the bot's own HOME


def default_parallel(ready_accounts: int, *, daytona: bool, env: Mapping[str, str]) -> int:
    """CSB's rule for a run without `--parallel`: 6 lanes per ready account locally; on Daytona
    `DAYTONA_PARALLEL_TASK_CAP` (default 60, at most 124)."""
    if daytona:
        try:
            cap = int(env.get("DAYTONA_PARALLEL_TASK_CAP", DAYTONA_PARALLEL_CAP))
        except ValueError:
            cap = DAYTONA_PARALLEL_CAP
        return max(MIN_SLOTS, min(cap, DAYTONA_PARALLEL_MAX))
    return max(MIN_SLOTS, SESSIONS_PER_ACCOUNT * max(1, ready_accounts))


def account_pool(config: EngineConfig, home: str) -> AccountPool:
    """`global_slots` when set; else sessions per account × accounts found; else `default_parallel`."""
    found = discover_homes(config.account_homes, home)
    if config.global_slots:
        slots = config.global_slots
    elif found:
        slots = config.sessions_per_account * len(found)
    else:
        slots = config.default_parallel
    slots = max(MIN_SLOTS, slots)
    homes = tuple(found) or (home,)
    return AccountPool(homes=homes, slots=slots, per_account=-(-slots // len(homes)), fallback=not found)


class AccountPicker:
    """Round robin over the accounts that are not resting and not full, within one claim transaction."""

    def __init__(self, ready: Sequence[Account], load: Mapping[str, int], per_account: int) -> None:
        self._turns = {account.home: account.turn for account in ready}
        self._load = {home: load.get(home, 0) for home in self._turns}
        self._per_account = per_account
        self._next_turn = max(self._turns.values(), default=0) + 1
        self.changed: dict[str, int] = {}

    def pick(self, count: int, avoid: Sequence[str | None]) -> list[str] | None:
        """Accounts for `count` lanes started together (distinct where possible), or None if too few.

        `avoid[i]` is the account lane i last failed on: a retry goes elsewhere when another is free.
        """
        if sum(max(0, self._per_account - load) for load in self._load.values()) < count:
            return None
        chosen: list[str] = []
        for index in range(count):
            free = [home for home, load in self._load.items() if load < self._per_account]
            previous = avoid[index] if index < len(avoid) else None
            home = min(free, key=lambda h: (h == previous and len(free) > 1, h in chosen, self._turns[h], h))
            chosen.append(home)
            self._load[home] += 1
            self._turns[home] = self.changed[home] = self._next_turn
            self._next_turn += 1
        return chosen
