#!/usr/bin/env bash
# Verifier for csv-quoting-debug-001.
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


def check_quoted_comma():
    from ingest.rows import split_row

    assert split_row('a,"b,c",d') == ["a", "b,c", "d"], split_row('a,"b,c",d')


def check_doubled_quotes():
    from ingest.rows import split_row

    assert split_row('"say ""hi""",x\n') == ['say "hi"', "x"], split_row('"say ""hi""",x\n')


def check_parse_file():
    from ingest.rows import parse

    rows = parse('name,city,notes\n"Doe, Jane",Oslo,vip\n\nRoe,"Bergen, NO",\n')
    assert rows == [["name", "city", "notes"], ["Doe, Jane", "Oslo", "vip"], ["Roe", "Bergen, NO", ""]], rows


CHECKS = [check_quoted_comma, check_doubled_quotes, check_parse_file]

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
