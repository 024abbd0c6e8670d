"""Whether a database error means "try again later" rather than a bug, and which of the two kinds it is:
the database is busy (it answered, but a lock or the pool did not come free in time) or away (it cannot be
reached at all). The two are told apart because a person is told different things: busy clears in a
moment, an outage takes about a minute."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# Every error `unavailable` can say yes to: catch these, ask it, and let the rest (bugs) through.
DATABASE_ERRORS = (SQLAlchemyError, OSError)


class Outage(StrEnum):
    BUSY = "busy"  # SQLite locked past its busy timeout, a PostgreSQL lock timeout, the pool exhausted
    AWAY = "away"  # refused, restarting, not taking connections, cut off, too slow to connect


# SQLite's words for a lock held past its busy timeout.
_BUSY_WORDS = ("locked", "busy")
# The driver's words for a database it cannot reach (asyncpg's refusals at connect, SQLite's missing file).
_AWAY_WORDS = ("unable to open", "disk i/o", "connection", "could not connect")
# PostgreSQL's SQLSTATE classes. Busy: insufficient resources such as too many connections (53), a lock
# not granted in time (55P03). Away: connection exceptions (08), operator intervention such as a shutdown
# or a restart under way (57P).
_BUSY_SQLSTATES = ("53", "55P03")
_AWAY_SQLSTATES = ("08", "57P")


def outage(exc: BaseException) -> Outage | None:
    """Which kind of "try again later" `exc` is, or None for an error that is a bug (a missing table,
    a broken query), which must still be reported as one."""
    if isinstance(exc, PoolTimeout):  # every pooled connection is in use: the bot itself is busy
        return Outage.BUSY
    if isinstance(exc, (DisconnectionError, InterfaceError, ConnectionError, TimeoutError)):
        return Outage.AWAY
    if not isinstance(exc, DBAPIError):
        return None
    sqlstate = _sqlstate(exc)
    if exc.connection_invalidated or sqlstate.startswith(_AWAY_SQLSTATES):
        return Outage.AWAY
    if sqlstate.startswith(_BUSY_SQLSTATES):
        return Outage.BUSY
    # OperationalError, or a driver error SQLAlchemy could not sort (asyncpg's refusals at connect).
    if isinstance(exc, OperationalError) or type(exc) is DBAPIError:
        return _by_words(str(exc.orig).lower())
    return None


def unavailable(exc: BaseException) -> bool:
    """The database is busy or away: worth trying again later, not a bug."""
    return outage(exc) is not None


def _by_words(message: str) -> Outage | None:
    if any(word in message for word in _BUSY_WORDS):
        return Outage.BUSY
    if any(word in message for word in _AWAY_WORDS):
        return Outage.AWAY
    return None


def _sqlstate(exc: DBAPIError) -> str:
    """The SQLSTATE PostgreSQL sent (asyncpg keeps it on the error SQLAlchemy wraps); '' otherwise."""
    for error in (exc.orig, getattr(exc.orig, "__cause__", None)):
        code = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
        if code:
            return str(code)
    return ""
