"""The in-process service registry every service announces itself to at import time."""
