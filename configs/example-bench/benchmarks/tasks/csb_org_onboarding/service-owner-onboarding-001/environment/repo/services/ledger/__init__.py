"""The general ledger."""
