"""Invoice issuing and lookup."""

from svcreg.registry import register

from services.billing.pricing import PORTS

register("invoices", PORTS["invoices"], "payments-core")


def issue(customer_id: str, amount_cents: int) -> dict:
    """Create an invoice record."""
    return {"customer": customer_id, "amount_cents": amount_cents, "status": "issued"}
