#!/usr/bin/env bash
# Verifier for header-parse-fix-001.
# Convention (Harbor's container and the csb-bot stand-in alike): the working directory is the
# task's code, and the reward, the fraction of checks passed, is written to $REWARD_FILE.
set -euo pipefail
export REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD_FILE")"
exec python3 -B - <<'PY'
import os
import sys

sys.path.insert(0, os.getcwd())


def check_name_lower_case():
    from httpkit.headers import parse_header

    assert parse_header("Content-Type: x")[0] == "content-type"


def check_value_trimmed():
    from httpkit.headers import parse_header

    assert parse_header("Accept:  text/html ")[1] == "text/html"


CHECKS = [check_name_lower_case, check_value_trimmed]

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
