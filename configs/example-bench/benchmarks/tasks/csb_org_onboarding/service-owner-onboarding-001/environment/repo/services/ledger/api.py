"""Ledger HTTP API."""

from svcreg.registry import register

register("ledger", 9443, "payments-core")


def balance(account: str) -> int:
    """Balance of ``account`` in cents (stubbed)."""
    return 0
