#!/usr/bin/env bash
# Verifier for changelog-entry-artifact-001 (artifact mode: the edited module is the scored artifact).
# Convention (Harbor's container and the csb-bot stand-in alike): the working directory is the
# task's code, and the reward, the fraction of checks passed, is written to $REWARD_FILE.
set -euo pipefail
export REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD_FILE")"
exec python3 -B - <<'PY'
import os
import sys

sys.path.insert(0, os.getcwd())


def check_heading():
    from relnotes.changelog import format_entry

    assert format_entry("1.2.0", "2026-03-01", ["a"]).splitlines()[0] == "## 1.2.0 (2026-03-01)"


def check_duplicates_dropped():
    from relnotes.changelog import format_entry

    text = format_entry("1.2.0", "2026-03-01", ["fix b", "fix b", "add a"])
    assert text.count("- fix b") == 1, text


def check_sorted():
    from relnotes.changelog import format_entry

    text = format_entry("1.2.0", "2026-03-01", ["zeta", "alpha", "mid"])
    assert text.splitlines()[1:] == ["- alpha", "- mid", "- zeta"], text


CHECKS = [check_heading, check_duplicates_dropped, check_sorted]

passed = 0
for check in CHECKS:
    try:
        check()
    except Exception as exc:  # a crash in the code under test is a failed check, not a verifier error
        print(f"FAIL {check.__name__}: {exc!r}")
    else:
        passed += 1
        print(f"PASS {check.__name__}")
reward = round(passed / len(CHECKS), 4)
with open(os.environ["REWARD_FILE"], "w") as fh:
    fh.write(f"{reward}\n")
print(f"reward: {reward} ({passed}/{len(CHECKS)} checks passed)")
PY
