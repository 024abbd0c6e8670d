#!/usr/bin/env bash
# Verifier for pagination-offset-fix-001.
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


ITEMS = list(range(1, 11))


def check_first_page_starts_at_first_item():
    from listing.pager import paginate

    assert paginate(ITEMS, 1, 3).items == [1, 2, 3], paginate(ITEMS, 1, 3)


def check_last_partial_page():
    from listing.pager import paginate

    assert paginate(ITEMS, 4, 3).items == [10], paginate(ITEMS, 4, 3)


def check_total_pages_rounds_up():
    from listing.pager import total_pages

    assert total_pages(10, 3) == 4, total_pages(10, 3)


def check_api_second_page():
    from listing.api import list_users

    users = [f"user{n}" for n in range(1, 11)]
    body = list_users(users, page=2)
    assert body == {"users": ["user4", "user5", "user6"], "page": 2, "pages": 4}, body


CHECKS = [
    check_first_page_starts_at_first_item,
    check_last_partial_page,
    check_total_pages_rounds_up,
    check_api_second_page,
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
