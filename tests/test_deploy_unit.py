"""deploy/csb-bot.service is a unit systemd reads without a complaint, and it starts what the README says.

Two checks: every section and key against the keys systemd 252 itself lists (a fixture, so this runs
anywhere), and, where `systemd-analyze` is installed, `systemd-analyze verify` on a copy pointed at this
clone (it also checks values and that the command exists). Under CI, verify may not skip.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "csb-bot.service"
ITEMS = ROOT / "tests" / "fixtures" / "systemd" / "configuration-items-252.txt"
INSTALLED_AT = "/opt/csb-bot"  # where the unit expects the clone, as its header says


def documented_keys() -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    section = ""
    for line in ITEMS.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line:
            keys.setdefault(section, set()).add(line.split("=", 1)[0])
    return keys


def unit_entries(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) in file order, read as systemd reads a unit: comments, blank lines."""
    entries, section = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, sep, value = line.partition("=")
        assert sep, f"not a key=value line: {raw!r}"
        assert section, f"a key before any section: {raw!r}"
        entries.append((section, key.strip(), value.strip()))
    return entries


def test_every_section_and_key_is_one_systemd_documents() -> None:
    documented = documented_keys()
    entries = unit_entries(UNIT.read_text())
    assert {section for section, _, _ in entries} == {"Unit", "Service", "Install"}
    unknown = [(s, k) for s, k, _ in entries if k not in documented.get(s, set())]
    assert unknown == []


def test_the_check_can_fail() -> None:
    documented = documented_keys()
    (section, key, _), *_ = unit_entries("[Service]\nKilMode=process\n")
    assert key not in documented[section]


def test_it_runs_serve_from_the_clone_and_stops_only_the_bot() -> None:
    values = {(s, k): v for s, k, v in unit_entries(UNIT.read_text())}
    argv = shlex.split(values[("Service", "ExecStart")])
    assert argv[0] == f"{INSTALLED_AT}/.venv/bin/csb-bot" and argv[1] == "serve"
    assert values[("Service", "WorkingDirectory")] == INSTALLED_AT
    # Lanes outlive a restart and are found again (README: the bot can be killed at any moment).
    assert values[("Service", "KillMode")] == "process"
    assert values[("Install", "WantedBy")] == "multi-user.target"


def test_systemd_analyze_verify_finds_nothing(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        if os.environ.get("CI") == "true":
            pytest.fail("systemd-analyze is not installed (Debian: apt-get install systemd)")
        pytest.skip("systemd-analyze is not installed")
    csb_bot = ROOT / ".venv" / "bin" / "csb-bot"
    assert csb_bot.exists(), "make .venv first"
    unit = tmp_path / "csb-bot.service"
    unit.write_text(UNIT.read_text().replace(INSTALLED_AT, str(ROOT)))
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(unit.read_text().replace("KillMode=process", "KillMode=proc"))
    complaint = subprocess.run([analyze, "verify", "--man=no", str(broken)], capture_output=True, text=True)
    assert "kill mode" in complaint.stderr  # the check above can fail
