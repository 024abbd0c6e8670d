"""How `make test` spreads the tests over pytest-xdist workers: slow tests first (`slow_first`), and
groups of tests that must share one worker (`--dist loadgroup`), made to work again (`join`).

xdist's scheduler reads a test's group from an `@group` suffix of the test's node id, and its worker
writes that suffix into `item._nodeid`, a field pytest 9.2 no longer reads (node ids are structured
now: pytest-xdist issue #1386). Nothing fails: the grouped tests are simply spread over every
worker, so each worker that got a Ray test started a Ray head of its own. `join` writes the suffix
where pytest 9.2 keeps the id, as xdist's fix for that issue does, until a release of xdist has it.
"""

from __future__ import annotations

import pytest

SLOW = "slow"


def slow_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The tests marked slow (real child processes, up to a minute or more each) before the others, each
    part in its collected order. Workers take one test at a time in this order (every test is its own unit
    under loadgroup), so the run ends on the quick tests: collected alphabetically, a worker that took one
    of the longest tests last kept the run going alone for a minute after the others had finished."""
    return sorted(items, key=lambda item: item.get_closest_marker(SLOW) is None)


def join(item: pytest.Item, group: str) -> None:
    """Give `item` the node id `<id>@<group>`, which xdist's loadgroup scheduler sends to one worker."""
    suffix = f"@{group}"
    if item.nodeid.endswith(suffix):
        return  # an xdist or pytest that carries the suffix itself
    structured = item._id  # the field pytest reads `nodeid` from
    item._id = type(structured).parse(f"{item.nodeid}{suffix}")
