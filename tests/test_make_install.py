"""`make test` installs only the Debian packages it needs, says which first, and never as a non-root user."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real child processes

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bin" / "need-debian-packages"


def _fake_tools(tmp_path: Path, uid: int) -> Path:
    """`id` and `apt-get` stand-ins on PATH: `id -u` prints `uid`, `apt-get` records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "apt.log"}\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return bin_dir


def _run(tmp_path: Path, uid: int, *packages: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{_fake_tools(tmp_path, uid)}:{os.environ['PATH']}"}
    return subprocess.run(
        ["sh", str(SCRIPT), *packages], env=env, capture_output=True, text=True, timeout=30, check=False
    )


def test_root_installs_just_the_named_packages_without_recommends_or_upgrades(tmp_path: Path) -> None:
    result = _run(tmp_path, 0, "chromium", "nodejs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "installing Debian packages: chromium nodejs"
    calls = (tmp_path / "apt.log").read_text().splitlines()
    assert calls == ["update -qq", "install -y --no-install-recommends --no-upgrade chromium nodejs"]


def test_without_root_it_prints_the_command_and_stops(tmp_path: Path) -> None:
    result = _run(tmp_path, 1000, "chromium")
    assert result.returncode == 1
    command = "apt-get update && apt-get install -y --no-install-recommends --no-upgrade chromium"
    assert command in result.stdout
    assert not (tmp_path / "apt.log").exists()


def test_nothing_named_means_nothing_installed(tmp_path: Path) -> None:
    result = _run(tmp_path, 0)
    assert result.returncode == 0 and result.stdout == ""
    assert not (tmp_path / "apt.log").exists()


def test_the_makefile_installs_debian_packages_only_through_the_script() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "apt-get" not in makefile
    assert "NEED_DEBIAN := sh bin/need-debian-packages" in makefile


def test_no_test_reads_a_path_outside_the_repository() -> None:
    """A user's clone has nothing beside it: fixtures live in tests/fixtures/."""
    outside = ("parents[" + "2]", '"sha' + 'red"', "../sha" + "red")
    for source in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("bot/**/*.py"), *ROOT.glob("bench/*.py")]:
        text = source.read_text(encoding="utf-8")
        assert not any(marker in text for marker in outside), source


def test_make_test_builds_the_ray_venv_apart_and_names_it_to_pytest(tmp_path: Path) -> None:
    """Ray is no dependency of the bot: its venv is separate, pinned, cached by a stamp, and handed to
    the tests in CSB_TEST_RAY (dry run: nothing installed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "test"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert dry.returncode == 0, dry.stderr
    assert ".venv-ray/bin/python -m pip install --quiet 'ray[default]==2.60.0'" in dry.stdout
    (pytest_line,) = [line for line in dry.stdout.splitlines() if ".venv/bin/pytest " in line]
    assert f"CSB_TEST_RAY={ROOT}/.venv-ray/bin " in pytest_line
    assert f"CSB_TEST_HARBOR_VENV={ROOT}/.venv-harbor " in pytest_line
    assert "touch .venv-ray/.installed-2.60.0" in dry.stdout
