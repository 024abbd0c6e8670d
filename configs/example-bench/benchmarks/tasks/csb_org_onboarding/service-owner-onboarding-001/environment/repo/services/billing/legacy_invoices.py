"""Deprecated CSV invoice export; kept for the finance team's monthly report."""

from svcreg.registry import register

from services.billing.pricing import PORTS

register("invoices-legacy", PORTS["invoices-legacy"], "billing-legacy")


def export_csv(invoices: list[dict]) -> str:
    """The old export format."""
    return "\n".join(f"{i['customer']},{i['amount_cents']}" for i in invoices)
