"""Orphaned lane processes on this host: a Harbor process carrying the bot's lane marker, started in the
CSB checkout, that no running lane in the database owns. Each is a warning (an operator stops it), never
a reason `serve` would fail."""

from __future__ import annotations

import os
from dataclasses import dataclass

from sqlalchemy.engine.url import make_url
from sqlalchemy.exc import SQLAlchemyError

from bot.engine.orphans import find_orphans
from bot.executors.processes import markers_supported
from bot.probes.base import Line, ProbeContext, note, ok
from bot.settings import SQLITE_DRIVERS
from bot.store.db import Store

_NOT_LOOKED = "orphaned lane processes not looked for"


@dataclass(frozen=True)
class OrphansProbe:
    name: str = "orphans"
    timeout_sec: float = 15.0

    async def run(self, context: ProbeContext) -> list[Line]:
        settings = context.settings
        if settings is None or {"CSB_DATABASE_URL", "CSB_REPO"} & context.unusable:
            return [
                note("orphaned lane processes not looked for: CSB_DATABASE_URL or CSB_REPO is not usable")
            ]
        if not markers_supported():
            return [note(f"{_NOT_LOOKED}: this host has no /proc")]
        url = settings.csb_database_url
        parsed = make_url(url)
        if parsed.drivername in SQLITE_DRIVERS and parsed.database and not os.path.exists(parsed.database):
            return [note(f"{_NOT_LOOKED}: no database yet")]
        store = Store(url)
        try:
            found = await find_orphans(store, settings.resolved_repo())
        except SQLAlchemyError as exc:  # the database probe says what is wrong with it
            return [note(f"{_NOT_LOOKED}: the database cannot be read ({type(exc).__name__})")]
        finally:
            await store.close()
        if not found:
            return [ok("no orphaned lane process on this host")]
        return [
            note(
                f"orphaned lane process: pid {process.pid}"
                + (f", job {process.job}" if process.job else "")
                + f", marker {process.marker}: no running lane owns it; stop it (kill -INT -{process.pid})"
            )
            for process in found
        ]
