"""Billing services: invoicing and the legacy invoice export."""
