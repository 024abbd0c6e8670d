#!/usr/bin/env bash
# Verifier for retry-backoff-debug-001.
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


def check_delays_double_from_base():
    from netutil.retry import backoff_delays

    assert backoff_delays(4, 0.5, 10.0) == [0.5, 1.0, 2.0, 4.0], backoff_delays(4, 0.5, 10.0)


def check_delays_capped():
    from netutil.retry import backoff_delays

    assert backoff_delays(6, 1.0, 8.0) == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0], backoff_delays(6, 1.0, 8.0)


def check_retry_sleeps_before_each_retry():
    from netutil.retry import call_with_retry

    outcomes = [ConnectionError("reset"), ConnectionError("reset"), "ok"]
    slept = []

    def flaky():
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    result = call_with_retry(flaky, attempts=5, base=0.25, cap=4.0, sleep=slept.append)
    assert (result, slept) == ("ok", [0.25, 0.5]), (result, slept)


CHECKS = [check_delays_double_from_base, check_delays_capped, check_retry_sleeps_before_each_retry]

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
