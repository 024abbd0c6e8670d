"""CSB's MANIFEST task key (`generate_manifest.py` `_normalize_task_name`): the name both sides of a
comparison are paired by, so an MCP lane's task copy (`mcp_ccx-agentic-082_ef3x9y`) and a baseline
trial (`ccx-agentic-082`) name one task, as they do in CSB's official MANIFEST."""

from __future__ import annotations

import re

_COPY_SUFFIX = re.compile(r"_[A-Za-z0-9]{6}$")
# The organisation part ends at the first dash; one that already ends in a double underscore is left
# alone, so the key of a key is itself (the bot's choice: CSB's keys come from raw trial names).
_INSTANCE = re.compile(r"^instance_((?:(?!__)[^-])+)-")


def manifest_task_key(name: str) -> str:
    """`mcp_`/`bl_` stripped with their copy suffix, `sgonly_` stripped, `ccx-` → `CCX-`, and
    `instance_ORG-REPO-…` → `instance_ORG__REPO-…` (the first dash after `instance_`)."""
    for prefix in ("mcp_", "bl_"):
        if name.startswith(prefix):
            name = _COPY_SUFFIX.sub("", name[len(prefix) :])
    name = name.removeprefix("sgonly_")
    if name.startswith("ccx-"):
        name = "CCX-" + name[len("ccx-") :]
    return _INSTANCE.sub(r"instance_\1__", name, count=1)
