"""Why the engine stopped a running lane (a lane's `stop_kind` and `stop_wanted`), named once for the
engine that stops and the services that ask it to."""

from __future__ import annotations

STOP_TIMEOUT = "timeout"
STOP_CANCEL = "cancel"
STOP_DRAIN = "drain"  # its account was drained with --stop
STOP_STALL = "stall"  # Stop and retry on its stall note
# Stops someone asked for so the lane runs again elsewhere: the attempt ends as an infrastructure
# failure and takes the retry path every other one takes (backoff, the retry limit, another account).
RETRY_STOPS = frozenset({STOP_DRAIN, STOP_STALL})
