"""All deployable services."""
