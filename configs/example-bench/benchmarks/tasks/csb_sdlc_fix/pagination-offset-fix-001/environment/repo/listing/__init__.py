"""Listing endpoints of the admin API."""
