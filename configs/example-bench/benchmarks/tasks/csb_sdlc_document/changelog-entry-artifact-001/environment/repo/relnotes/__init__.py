"""Release notes helpers."""
