"""`lazy_exports`: a package's names load from their modules on first use, and a name that also names one
of the package's modules is refused (importing that module would replace the name with the module)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import bot.csb
from bot.domain.lazy_exports import lazy_exports


def test_a_name_that_also_names_a_module_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("bot.csb: lane_env also name modules")):
        lazy_exports("bot.csb", {"bot.csb.lane_env": ("lane_env",)})


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=re.escape("module 'bot.csb' has no attribute 'no_such_name'")):
        bot.csb.no_such_name  # noqa: B018 (the lookup is the test)


def test_a_name_loads_its_module_on_first_use_only() -> None:
    """In a fresh interpreter: importing a light module of the package leaves its heavy siblings alone."""
    script = (
        "import sys, bot.csb.child_env\n"
        "assert 'bot.csb.preflight' not in sys.modules\n"
        "from bot.csb import run_preflight\n"
        "assert 'bot.csb.preflight' in sys.modules and vars(bot.csb)['run_preflight'] is run_preflight\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
