"""The Ray tests share one worker under `make test`: the group suffix `xdist_groups.join` gives a test's
node id is the one pytest-xdist's loadgroup scheduler reads, on the pytest this project pins. The slow
tests are handed out first."""

from __future__ import annotations

import pytest
import xdist_groups
from xdist.scheduler.loadgroup import LoadGroupScheduling

SOURCE = """
import pytest

def test_plain():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_with_params(n):
    pass
"""


def test_joined_tests_are_one_scope_for_xdist_and_the_others_are_not(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    items = pytester.getitems(SOURCE)
    plain, first, second = items
    before = {item.name: item.nodeid for item in items}
    for item in (first, second):
        xdist_groups.join(item, "ray-head")
        xdist_groups.join(item, "ray-head")  # once is enough: the suffix is not doubled
    scope = LoadGroupScheduling._split_scope  # how the scheduler groups node ids
    assert scope(None, first.nodeid) == scope(None, second.nodeid) == "ray-head"  # type: ignore[arg-type]
    assert first.nodeid == f"{before[first.name]}@ray-head"
    assert plain.nodeid == before[plain.name]
    assert scope(None, plain.nodeid) == plain.nodeid  # type: ignore[arg-type]


ORDERED = """
import pytest

def test_quick_a():
    pass

@pytest.mark.slow
def test_slow_b():
    pass

def test_quick_c():
    pass

@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2])
def test_slow_d(n):
    pass
"""


def test_slow_tests_come_first_and_each_part_keeps_its_order(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers = slow\n")
    items = pytester.getitems(ORDERED)
    assert [item.name for item in xdist_groups.slow_first(items)] == [
        "test_slow_b",
        "test_slow_d[1]",
        "test_slow_d[2]",
        "test_quick_a",
        "test_quick_c",
    ]
