"""Slack's rate budgets, kept in the database (`bot/store/pacing.py`): the arithmetic of one budget,
and two stores (as two bot processes would hold them) drawing on the same one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.store import pacing
from bot.store.db import Store
from bot.store.pacing import Budget, Sends

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
EDITS = Budget("chat.update", interval=timedelta(seconds=3), per_minute=4)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_one_target_waits_its_interval_and_others_go() -> None:
    sends = Sends()
    sends.add("card-1", at(0))
    assert sends.not_before(EDITS, "card-1", at(1)) == at(3)
    assert sends.not_before(EDITS, "card-1", at(3)) is None
    assert sends.not_before(EDITS, "card-2", at(1)) is None


def test_the_minute_cap_counts_every_target_and_frees_the_oldest_first() -> None:
    sends = Sends()
    for second, card in enumerate(["a", "b", "c", "d"]):
        sends.add(card, at(second * 10))
    assert sends.not_before(EDITS, "e", at(40)) == at(60)  # the first of the four leaves the minute
    assert sends.not_before(EDITS, "e", at(60)) is None


def test_a_budget_row_keeps_only_what_its_rules_still_need() -> None:
    sends = Sends()
    sends.add("a", at(0))
    sends.add("b", at(50))
    loaded = Sends.load(sends.dump(), EDITS, at(61))
    assert loaded.last == {} and loaded.recent == [at(50)]
    loaded.remove("b", at(50))
    assert loaded.recent == []


async def test_two_processes_draw_on_one_budget(tmp_path: Path, db_url: str) -> None:
    """What one store took, the other sees: the second edit of a card within its interval waits, an
    edit given back frees its place, and a restamped one counts from when Slack answered."""
    first, second = Store(db_url), Store(db_url)
    await first.create_tables()
    try:
        async with first.write() as session:
            assert await pacing.reserve(session, EDITS, "card-1", at(0)) is None
        async with second.write() as session:
            assert await pacing.reserve(session, EDITS, "card-1", at(1)) == at(3)
            assert await pacing.reserve(session, EDITS, "card-2", at(1)) is None
        async with first.write() as session:
            await pacing.restamp(session, EDITS, "card-1", at(0), at(2))
        async with second.write() as session:
            assert await pacing.reserve(session, EDITS, "card-1", at(3)) == at(5)
            await pacing.release(session, EDITS, "card-2", at(1))
        async with first.write() as session:
            assert await pacing.reserve(session, EDITS, "card-2", at(2)) is None
    finally:
        await first.close()
        await second.close()
