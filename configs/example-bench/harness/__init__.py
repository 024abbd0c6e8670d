"""Harbor plug-ins of the example bench: the host-root environment (not a security boundary)."""
