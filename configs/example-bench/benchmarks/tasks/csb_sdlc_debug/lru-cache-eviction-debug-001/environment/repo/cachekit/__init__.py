"""In-process caches for the catalogue service."""
