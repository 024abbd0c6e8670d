"""`/csb accounts`, `/csb drain-account` and `/csb undrain-account`: the accounts lanes run under, as
rows and files say, and the admins' drain, kept in the database so every bot process obeys it.

A drain only writes rows: each claim (`engine/dispatch.py`) skips a drained account, and with `--stop`
the watcher stops that account's running lanes on its next look and retries them elsewhere as
infrastructure failures (the engine's one retry path).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb.account_homes import account_name, discover_homes, token_minutes
from bot.csb.preflight import AccountHealth
from bot.csb.usage_cache import AccountUsage, UsageCache, cache_path, read_usage_cache
from bot.domain.clock import Clock
from bot.domain.command_line import DRAIN_ACCOUNT_USAGE, UNDRAIN_ACCOUNT_USAGE
from bot.domain.errors import PolicyError, UserInputError
from bot.domain.events import AccountHeld, LaneRestarted
from bot.domain.policy import Actor, PolicyConfig, may_administer
from bot.domain.stops import STOP_DRAIN
from bot.services.account_hold import why_held
from bot.services.checks import CheckRunner
from bot.settings import EngineConfig
from bot.store import accounts, lanes, outbox
from bot.store.db import Store
from bot.store.lanes import StopAsked
from bot.store.records import Account, AccountEvent

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AccountRow:
    """One account as `/csb accounts` shows it."""

    name: str
    token_minutes: int | None  # None: no readable credentials
    lanes_running: int
    usage: AccountUsage
    held: AccountHeld | None  # why no new lane starts on it now (None: one may)


@dataclass(frozen=True)
class AccountsOverview:
    health: AccountHealth | None  # CSB's own verdict, when the checkout has account_health.py
    rows: tuple[AccountRow, ...]
    cache: UsageCache
    max_utilization: float
    fallback: bool  # no account home: lanes run with the bot's own HOME
    events: tuple[AccountEvent, ...]  # the latest drains and undrains


@dataclass(frozen=True)
class DrainDone:
    """What a drain or an undrain changed, for the reply."""

    name: str
    drained: bool  # True: drained now; False: undrained now
    changed: bool  # False: it already was
    stopped: tuple[StopAsked, ...] = ()


class AccountService:
    def __init__(
        self,
        store: Store,
        checks: CheckRunner,
        policy: PolicyConfig,
        config: EngineConfig,
        clock: Clock,
        home: str,
    ) -> None:
        self._store = store
        self._checks = checks
        self._policy = policy
        self._config = config
        self._clock = clock
        self._home = home  # the bot's HOME: account homes and CSB's usage cache are found under it

    async def overview(self) -> AccountsOverview:
        """Every account with its token, lanes, utilisation and hold, and CSB's own verdict beside them."""
        health, (pool_homes, fallback, cache) = await asyncio.gather(self._checks.accounts(), self._files())
        now = self._clock.now()
        async with self._store.read() as session:
            rows = {account.home: account for account in await accounts.all_accounts(session)}
            running = (await lanes.running_counts(session)).by_account
            events = await accounts.last_events(session, limit=5)
        homes = list(dict.fromkeys([*pool_homes, *(home for home in rows if home in running)]))
        # Each account's token is a file: read in a worker thread, not on the event loop.
        shown = await asyncio.to_thread(self._rows, homes, rows, running, fallback, cache, now)
        return AccountsOverview(
            health=health,
            rows=shown,
            cache=cache,
            max_utilization=self._config.max_utilization,
            fallback=fallback,
            events=tuple(events),
        )

    def _rows(
        self,
        homes: list[str],
        rows: dict[str, Account],
        running: dict[str, int],
        fallback: bool,
        cache: UsageCache,
        now: datetime,
    ) -> tuple[AccountRow, ...]:
        """One row per account; an account the engine has not written a row for yet is neither drained
        nor resting."""
        shown = []
        for home in homes:
            account = rows.get(home) or Account(home, 0, None, None, None, None)
            limit = self._config.max_utilization
            shown.append(
                AccountRow(
                    name=account_name(home),
                    token_minutes=token_minutes(home, now),
                    lanes_running=running.get(home, 0),
                    usage=cache.shown(account_name(home)),
                    held=why_held(account, now, fallback=fallback, ready=None, usage=cache, limit=limit),
                )
            )
        return tuple(shown)

    async def drain(self, name: str, actor: Actor, *, stop: bool) -> DrainDone:
        """No new lane on the account, on every replica; with `stop`, its running lanes are stopped and
        retried elsewhere. Audited in the account's trail and in each affected run's."""
        self._authorize(actor, "drain an account")
        home = await self._home_of(name, DRAIN_ACCOUNT_USAGE)
        now = self._clock.now()
        async with self._store.write() as session:
            await accounts.ensure_accounts(session, [home])
            changed = await accounts.drain(session, home, actor.user_id, now)
            stopped = await lanes.want_stop(session, STOP_DRAIN, account=home) if stop else []
            if changed:
                await accounts.record_event(session, home, "drained", actor.user_id, now)
            if stopped:
                detail = f"stopped {len(stopped)} running lane(s) to retry elsewhere"
                await accounts.record_event(session, home, "lanes stopped", actor.user_id, now, detail)
                await self._tell_runs(session, stopped, actor, account_name(home), now)
        log.info(
            "account %s drained by %s (stop=%s, %d lanes)",
            account_name(home),
            actor.user_id,
            stop,
            len(stopped),
        )
        return DrainDone(name=account_name(home), drained=True, changed=changed, stopped=tuple(stopped))

    async def undrain(self, name: str, actor: Actor) -> DrainDone:
        self._authorize(actor, "undrain an account")
        home = await self._home_of(name, UNDRAIN_ACCOUNT_USAGE)
        now = self._clock.now()
        async with self._store.write() as session:
            changed = await accounts.undrain(session, home)
            if changed:
                await accounts.record_event(session, home, "undrained", actor.user_id, now)
        log.info("account %s undrained by %s", account_name(home), actor.user_id)
        return DrainDone(name=account_name(home), drained=False, changed=changed)

    def _authorize(self, actor: Actor, action: str) -> None:
        verdict = may_administer(self._policy, actor, action)
        if not verdict.allowed:
            log.warning("%s refused to %s: %s", actor.user_id, action, verdict.reason)
            raise PolicyError(verdict.reason)

    async def _home_of(self, name: str, usage: str) -> str:
        """The account home a name means (its folder's name, or its whole path); a clear refusal naming
        the accounts there are for anything else."""
        if not name:
            raise UserInputError("which account? give its name", hint=usage)
        pool_homes, _, _ = await self._files()
        async with self._store.read() as session:
            known = list(
                dict.fromkeys([*pool_homes, *(a.home for a in await accounts.all_accounts(session))])
            )
        for home in known:
            if name in (home, account_name(home)):
                return home
        names = ", ".join(f"`{account_name(home)}`" for home in known) or "none"
        raise UserInputError(f"there is no account `{name[:60]}`; the accounts are: {names}", hint=usage)

    async def _tell_runs(
        self, session: AsyncSession, stopped: list[StopAsked], actor: Actor, name: str, now: datetime
    ) -> None:
        from_run: dict[int, list[StopAsked]] = {}
        for lane in stopped:
            from_run.setdefault(lane.run_id, []).append(lane)
        for run_id, moved in sorted(from_run.items()):
            event = LaneRestarted(
                run_id=run_id,
                user=actor.user_id,
                lanes=tuple(f"{lane.task_id}/{lane.role}" for lane in moved),
                account=name,
            )
            await outbox.tell_run(session, run_id, what="lanes_moved", event=event, now=now)

    async def _files(self) -> tuple[tuple[str, ...], bool, UsageCache]:
        """The account homes found now, whether none was (the bot's own HOME), and CSB's usage cache."""
        path = cache_path(self._config.usage_cache, self._home)
        stale = timedelta(seconds=self._config.usage_stale_sec)
        found = await asyncio.to_thread(discover_homes, self._config.account_homes, self._home)
        cache = await asyncio.to_thread(read_usage_cache, path, self._clock.now(), stale)
        return tuple(found) or (self._home,), not found, cache
