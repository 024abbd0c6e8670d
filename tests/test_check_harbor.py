"""`csb-bot check` names the Harbor it found and asks it (`--print-config`) if it takes the lane command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import bot_env, run

from bot.csb.harbor_probe import PRINT_CONFIG

pytestmark = pytest.mark.slow  # real child processes

LANE_FLAGS = ("--path", "--agent-import-path", "--model", "--jobs-dir", "--timeout-multiplier")


def fake_harbor(tmp_path: Path, *, refuse: bool) -> Path:
    """A harbor with `--version` and `run --print-config`; records each call's argv and PYTHONPATH."""
    path = tmp_path / "harbor"
    calls = tmp_path / "calls.jsonl"
    path.write_text(f"""#!/usr/bin/env python3
import json, os, sys
with open({str(calls)!r}, "a") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "pythonpath": os.environ.get("PYTHONPATH", "")}}) + "\\n")
if sys.argv[1:] == ["--version"]:
    print("9.9.9")
elif sys.argv[1:] == ["run", "--help"]:
    print("Usage: harbor run [OPTIONS]\\n --print-config  Print the resolved JobConfig JSON and exit.")
elif {refuse!r}:
    print("No such option: --agent-import-path", file=sys.stderr)
    sys.exit(2)
else:
    print(json.dumps({{"job_name": "x"}}))
""")
    path.chmod(0o755)
    return path


def calls(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def test_check_names_the_version_and_dry_runs_the_lane_command(tmp_path: Path) -> None:
    harbor = fake_harbor(tmp_path, refuse=False)
    env = bot_env(tmp_path, CSB_HARBOR=str(harbor), HARBOR_ENV="harness.host_root:HostRootEnvironment")
    result = run(["check"], env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"✓ harbor 9.9.9: {harbor}" in lines
    assert any(line.startswith("✓ harbor accepts the lane command") for line in lines), lines
    (dry_run,) = [call for call in calls(tmp_path) if PRINT_CONFIG in call["argv"]]  # type: ignore[operator]
    argv = dry_run["argv"]
    assert isinstance(argv, list) and argv[0] == "run" and argv[-1] == "--print-config"
    assert all(flag in argv for flag in LANE_FLAGS), argv
    assert (
        argv[argv.index("--env") + 1] == "harness.host_root:HostRootEnvironment"
    )  # HARBOR_ENV, as lanes get it
    assert str(dry_run["pythonpath"]).split(":")[0].endswith("example-bench")  # the checkout, as lanes get it


def test_a_harbor_that_refuses_the_lane_command_is_a_problem(tmp_path: Path) -> None:
    harbor = fake_harbor(tmp_path, refuse=True)
    result = run(["check"], bot_env(tmp_path, CSB_HARBOR=str(harbor)), cwd=tmp_path)
    assert result.returncode == 1
    assert "✗ harbor refuses the lane command (exit 2): No such option: --agent-import-path" in result.stdout


def test_the_bench_stand_in_is_named_unknown_and_its_lane_command_not_checked(tmp_path: Path) -> None:
    result = run(["check"], bot_env(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "· lane command not checked: this harbor has no `run --print-config`" in result.stdout
    assert "of unknown version" in result.stdout
