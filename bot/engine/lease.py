"""Only one bot process runs the timers: the one holding the lease row, renewed by its heartbeat.

A holder that stops renewing loses the lease after its ttl; a holder whose pid is dead on this host
loses it at once, so a restarted bot takes over without waiting. "This host" is `this_host()`: the same
machine boot and PID namespace, never the host name alone, since a pid from a namespace this process
cannot see into would look dead while its holder runs on.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.domain.clock import Clock
from bot.executors.processes import process_alive, this_host
from bot.store import lease
from bot.store.db import Store
from bot.store.lease import Claimant
from bot.store.records import Lease

RENEW_FRACTION = 3  # renew after a third of the ttl, so two missed heartbeats still hold it


@dataclass(frozen=True)
class Holding:
    held: bool
    fresh: bool  # just taken from another holder (or from nobody): reconcile before acting


def new_claimant() -> Claimant:
    host = this_host()
    return Claimant(holder=f"{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}", host=host, pid=os.getpid())


class LeaseKeeper:
    def __init__(self, store: Store, clock: Clock, ttl_sec: float, slots: int) -> None:
        self._store = store
        self._clock = clock
        self._ttl = timedelta(seconds=ttl_sec)
        self._slots = slots
        self.claimant = new_claimant()
        self._renewed_at: datetime | None = None

    @property
    def ttl(self) -> timedelta:
        return self._ttl

    @property
    def held(self) -> bool:
        """As of the last heartbeat; state changes that matter re-check it in their own transaction."""
        return self._renewed_at is not None and self._clock.now() < self._renewed_at + self._ttl

    async def hold(self) -> Holding:
        """The heartbeat: take the lease if it is free or its holder is gone; renew it if it is ours."""
        now = self._clock.now()
        if self._renewed_at is not None and now - self._renewed_at < self._ttl / RENEW_FRACTION:
            return Holding(held=True, fresh=False)
        async with self._store.write() as session:
            current = await lease.get_lease(session)
            previous = current.holder if current else None
            taken = False
            if current is None or previous == self.claimant.holder or self._is_free(current, now):
                taken = await lease.take(
                    session,
                    self.claimant,
                    now=now,
                    ttl=self._ttl,
                    slots=self._slots,
                    expected_holder=previous,
                )
        fresh = taken and previous != self.claimant.holder
        self._renewed_at = now if taken else None
        return Holding(held=taken, fresh=fresh)

    def _is_free(self, current: Lease, now: datetime) -> bool:
        if current.expires_at <= now:
            return True
        return current.host == self.claimant.host and not process_alive(current.pid)

    async def release(self) -> None:
        """Give the lease up on a clean shutdown, so a successor takes it at once."""
        if self._renewed_at is None:
            return
        async with self._store.write() as session:
            await lease.release(session, self.claimant.holder, self._clock.now())
        self._renewed_at = None
