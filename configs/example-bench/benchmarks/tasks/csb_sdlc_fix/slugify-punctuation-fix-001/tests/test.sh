#!/usr/bin/env bash
# Verifier for slugify-punctuation-fix-001.
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


def check_punctuation_dropped():
    from textkit.slug import slugify

    assert slugify("Hello, World!") == "hello-world", slugify("Hello, World!")


def check_whitespace_collapsed():
    from textkit.slug import slugify

    assert slugify("  Spaced   out  ") == "spaced-out", slugify("  Spaced   out  ")


def check_accents_folded():
    from textkit.slug import slugify

    assert slugify("Crème Brûlée") == "creme-brulee", slugify("Crème Brûlée")


CHECKS = [check_punctuation_dropped, check_whitespace_collapsed, check_accents_folded]

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
