#!/usr/bin/env bash
# Verifier for lru-cache-eviction-debug-001.
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


def check_get_refreshes_entry():
    from cachekit.lru import LRUCache

    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert ("a" in cache, "b" in cache) == (True, False), ("a" in cache, "b" in cache)


def check_put_refreshes_entry():
    from cachekit.lru import LRUCache

    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 3)
    cache.put("c", 4)
    assert (cache.get("a"), "b" in cache) == (3, False), (cache.get("a"), "b" in cache)


def check_memoize_keeps_hot_key():
    from cachekit.memo import memoize

    calls = []

    @memoize(capacity=2)
    def lookup(product):
        calls.append(product)
        return product.upper()

    for product in ["hot", "x", "hot", "y", "hot"]:
        lookup(product)
    assert calls == ["hot", "x", "y"], calls


CHECKS = [check_get_refreshes_entry, check_put_refreshes_entry, check_memoize_keeps_hot_key]

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
