"""The outbox pruner's batch size rule: each batch sized from the last one's pace to hold the write lock
about a budget of time, shrinking at once past it, growing slowly under it, within its bounds."""

from __future__ import annotations

from bot.domain.batch_size import BatchRule

RULE = BatchRule(budget_ms=20.0, largest=500, smallest=10)


def test_a_batch_over_the_budget_shrinks_to_what_the_budget_held_at_its_pace() -> None:
    assert RULE.next_size(200, 80.0) == 50  # 0.4 ms a row: 50 rows in 20 ms
    assert RULE.next_size(200, 21.0) == 190


def test_a_batch_under_the_budget_grows_by_a_quarter_at_most() -> None:
    assert RULE.next_size(200, 2.0) == 250  # its pace would allow 2,000
    assert RULE.next_size(200, 18.0) == 222  # its pace allows 222, less than a quarter more
    assert RULE.next_size(200, 0.0) == 250  # too quick to measure
    assert RULE.next_size(1, 0.0) == 10  # from below the smallest size: up to it


def test_the_size_stays_within_its_bounds() -> None:
    assert RULE.next_size(480, 1.0) == 500
    assert RULE.next_size(20, 1000.0) == 10  # even a stalled machine deletes some rows a batch


def test_at_a_steady_pace_the_size_settles_where_a_batch_takes_the_budget() -> None:
    size, per_row_ms = 200, 0.25
    for _ in range(20):
        size = RULE.next_size(size, size * per_row_ms)
    assert size == 80
