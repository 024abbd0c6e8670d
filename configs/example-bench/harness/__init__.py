"""Harbor plug-ins of the example bench: the scripted agent and its rule, and the host-root environment
(not a security boundary)."""
