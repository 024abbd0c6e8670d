"""Layered service settings: built-in defaults < settings file < environment overrides."""
