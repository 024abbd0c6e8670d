"""Whether a database error means "busy or away, try again later" rather than a bug."""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

_BUSY_WORDS = ("locked", "busy", "unable to open", "disk i/o", "connection", "could not connect")


def unavailable(exc: BaseException) -> bool:
    """SQLite locked past its busy timeout, or a database that cannot be reached.

    These pass; a missing table or a broken query does not, so it is still reported as a bug.
    """
    if isinstance(exc, (DisconnectionError, InterfaceError, PoolTimeout, ConnectionError)):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    return isinstance(exc, OperationalError) and any(word in str(exc.orig).lower() for word in _BUSY_WORDS)
