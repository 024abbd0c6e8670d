"""Small HTTP helpers."""
