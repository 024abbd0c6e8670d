#!/usr/bin/env bash
# Verifier for service-owner-onboarding-001.
# Convention (Harbor's container and the csb-bot stand-in alike): the working directory is the
# task's code (/workspace in the container, environment/repo of a scratch copy under the
# stand-in), and the reward, the fraction of checks passed, is written to $REWARD_FILE.
set -euo pipefail
export REWARD_FILE="${REWARD_FILE:-/logs/verifier/reward.txt}"
mkdir -p "$(dirname "$REWARD_FILE")"
exec python3 -B - <<'PY'
import os
import sys

sys.path.insert(0, os.getcwd())


import importlib
import json


def answer():
    with open("answer.json") as fh:
        return json.load(fh)


def registration():
    """What the module named in the answer really registers as `invoices`."""
    importlib.import_module(answer()["module"])
    from svcreg.registry import lookup

    found = lookup("invoices")
    assert found is not None, f"{answer()['module']} does not register 'invoices'"
    return found


def check_module_registers_invoices():
    registration()


def check_port():
    assert answer()["port"] == registration().port == 8443, answer()


def check_owner():
    assert answer()["owner"] == registration().owner == "payments-core", answer()


CHECKS = [check_module_registers_invoices, check_port, check_owner]

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
