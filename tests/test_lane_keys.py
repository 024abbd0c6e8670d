"""Lane keys, on both databases: each key gets one number however many writers ask for it at once, a
summary's packed numbers count what its JSON lists, migration 0012 fills them in for summaries written
before it, and a summary an older csb-bot wrote (JSON only) is still counted."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from pathlib import Path

from sqlalchemy import select, text, update

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from history_fill import fill  # noqa: E402

from bot.store import lane_keys, summaries  # noqa: E402
from bot.store.db import Store  # noqa: E402
from bot.store.models import RunSummary  # noqa: E402

KEYS = [("csb_sdlc_fix", "baseline-local-direct", f"task-{n}") for n in range(1200)]


def test_packed_numbers_count_as_a_counter_would() -> None:
    runs = [[3, 1, 3], [], [1, 70000], [2**31 - 1]]
    blobs = [lane_keys.pack(numbers) for numbers in runs]
    assert [lane_keys.unpack(blob).tolist() for blob in blobs] == runs
    assert lane_keys.pack([1, 2]) == b"\x01\x00\x00\x00\x02\x00\x00\x00"  # little-endian, on any host
    assert lane_keys.count(blobs) == Counter(n for numbers in runs for n in numbers)
    assert lane_keys.count([]) == Counter()
    assert lane_keys.count([b""]) == Counter()


async def test_a_key_gets_one_number_however_many_writers_ask(db_url: str) -> None:
    stores = [Store(db_url) for _ in range(3)]
    try:

        async def ask(store: Store, keys: list[lane_keys.Key]) -> dict[lane_keys.Key, int]:
            async with store.write() as session:
                return await lane_keys.intern(session, keys)

        # Overlapping sets, more keys than one statement takes, from three connections at once.
        answers = await asyncio.gather(
            ask(stores[0], KEYS), ask(stores[1], KEYS[::-1]), ask(stores[2], KEYS[600:] + KEYS[:10])
        )
        assert answers[0] == answers[1]
        assert answers[2] == {key: answers[0][key] for key in KEYS[600:] + KEYS[:10]}
        assert len(set(answers[0].values())) == len(KEYS)
        async with stores[0].read() as session:
            assert await lane_keys.keys_of(session, answers[0].values()) == {
                n: k for k, n in answers[0].items()
            }
            assert await lane_keys.intern(session, KEYS[:5]) == {key: answers[0][key] for key in KEYS[:5]}
    finally:
        for store in stores:
            await store.close()


async def _counted_from_json(store: Store, run_ids: list[int]) -> Counter[lane_keys.Key]:
    """What the summaries' JSON lists, counted the way coverage counted before the numbers."""
    import json

    async with store.read() as session:
        rows = await session.execute(select(RunSummary.valid_json).where(RunSummary.run_id.in_(run_ids)))
        return Counter(tuple(lane) for valid in rows.scalars() for lane in json.loads(valid))


async def test_0012_fills_the_numbers_and_older_summaries_are_still_counted(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    try:
        filled = await fill(store, 6, 9)
        run_ids = list(range(1, filled.runs + 1))
        expected = await _counted_from_json(store, run_ids)
        assert expected.total() > 20 and max(expected.values()) > 1  # runs share their tasks
        async with store.read() as session:
            assert await summaries.valid_lane_counts(session, run_ids) == expected
        async with store.write() as session:  # the database as 0011 left it
            await session.execute(text("ALTER TABLE run_summaries DROP COLUMN valid_keys"))
            await session.execute(text("DROP TABLE lane_keys"))
            await session.execute(text("UPDATE alembic_version SET version_num = '0011'"))
        await store.create_tables()  # upgrades as `serve` does at start
        async with store.read() as session:
            assert None not in (await session.execute(select(RunSummary.valid_keys))).scalars().all()
            assert await summaries.valid_lane_counts(session, run_ids) == expected
            assert await summaries.valid_lane_counts(session, run_ids[:2]) == await _counted_from_json(
                store, run_ids[:2]
            )
        # A summary an older csb-bot wrote after the upgrade has no numbers: its JSON is read instead.
        async with store.write() as session:
            await session.execute(
                update(RunSummary).where(RunSummary.run_id.in_(run_ids[::2])).values(valid_keys=None)
            )
        async with store.read() as session:
            assert await summaries.valid_lane_counts(session, run_ids) == expected
            assert await summaries.valid_lane_counts(session, []) == Counter()
    finally:
        await store.close()
