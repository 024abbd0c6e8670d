#!/usr/bin/env bash
# Verifier for config-merge-nested-fix-001.
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


import copy


def check_nested_keys_merge():
    from settings.merge import deep_merge

    merged = deep_merge({"db": {"host": "h", "pool": {"min": 1, "max": 5}}}, {"db": {"pool": {"max": 9}}})
    assert merged == {"db": {"host": "h", "pool": {"min": 1, "max": 9}}}, merged


def check_resolve_layers():
    from settings.layers import resolve

    settings = resolve({"db": {"port": 5433}}, {"log": {"level": "debug"}})
    expected = {
        "db": {"host": "localhost", "port": 5433, "pool": {"min": 1, "max": 10}},
        "log": {"level": "debug", "json": False},
    }
    assert settings == expected, settings


def check_defaults_untouched():
    from settings import layers

    pristine = copy.deepcopy(layers.DEFAULTS)
    layers.resolve({"db": {"host": "db.internal"}}, {"log": {"json": True}})
    assert layers.DEFAULTS == pristine, layers.DEFAULTS


def check_result_shares_nothing_with_override():
    from settings.merge import deep_merge

    override = {"db": {"port": 6543}}
    merged = deep_merge({}, override)
    merged["db"]["port"] = 1
    assert override == {"db": {"port": 6543}}, override


CHECKS = [
    check_nested_keys_merge,
    check_resolve_layers,
    check_defaults_untouched,
    check_result_shares_nothing_with_override,
]

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
