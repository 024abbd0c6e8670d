"""Whether a database error means "busy or away, try again later" rather than a bug."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# Every error `unavailable` can say yes to: catch these, ask it, and let the rest (bugs) through.
DATABASE_ERRORS = (SQLAlchemyError, OSError)

_BUSY_WORDS = ("locked", "busy", "unable to open", "disk i/o", "connection", "could not connect")
# PostgreSQL's SQLSTATE classes for a server that cannot serve now: connection exceptions (08),
# operator intervention such as a shutdown or a restart under way (57P), too many connections (53).
_AWAY_SQLSTATES = ("08", "57P", "53")


def unavailable(exc: BaseException) -> bool:
    """SQLite locked past its busy timeout, or a database that cannot be reached (refused, restarting,
    not taking connections, too slow to connect).

    These pass; a missing table or a broken query does not, so it is still reported as a bug.
    """
    if isinstance(exc, (DisconnectionError, InterfaceError, PoolTimeout, ConnectionError, TimeoutError)):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated or _sqlstate(exc).startswith(_AWAY_SQLSTATES):
        return True
    # OperationalError, or a driver error SQLAlchemy could not sort (asyncpg's refusals at connect).
    sorted_elsewhere = not isinstance(exc, OperationalError) and type(exc) is not DBAPIError
    return not sorted_elsewhere and any(word in str(exc.orig).lower() for word in _BUSY_WORDS)


def _sqlstate(exc: DBAPIError) -> str:
    """The SQLSTATE PostgreSQL sent (asyncpg keeps it on the error SQLAlchemy wraps); '' otherwise."""
    for error in (exc.orig, getattr(exc.orig, "__cause__", None)):
        code = getattr(error, "sqlstate", None) or getattr(error, "pgcode", None)
        if code:
            return str(code)
    return ""
