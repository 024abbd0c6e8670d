"""Billing constants shared by the billing services."""

PORTS = {"invoices": 8443, "invoices-legacy": 8080}
