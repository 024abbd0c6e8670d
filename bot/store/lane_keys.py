"""Lane keys: each (suite, config, MANIFEST task key) a valid lane was counted under, stored once by number.

A closed run's summary keeps its valid lanes as these numbers, packed as little-endian int32s
(`valid_keys`), so `/csb coverage --staging` adds up 500 runs' lanes as one array of integers instead of
decoding 200,000 JSON triples. Numbers are handed out by the database: two processes closing runs at once
meet on the unique key (`INSERT … ON CONFLICT DO NOTHING`, in key order, then read), never on two numbers
for one key.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from bot.store.models import LaneKey
from bot.store.narrow import table_of
from bot.store.upsert import insert

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Key = tuple[str, str, str]  # (suite, config, MANIFEST task key)

_KEYS = table_of(LaneKey)
_COLUMNS = (_KEYS.c.id, _KEYS.c.suite, _KEYS.c.config, _KEYS.c.task)
_AT_ONCE = 500  # keys per statement: well under either database's limit on bound values


async def intern(session: AsyncSession, keys: Iterable[Key]) -> dict[Key, int]:
    """The number of each key, adding those not seen before, in the caller's transaction."""
    # In one order for every writer: two inserting the same new keys wait on each other in that order,
    # never each on the other (PostgreSQL's deadlock, seen with the keys of two runs given reversed).
    wanted = sorted(set(keys))
    found: dict[Key, int] = {}
    for first in range(0, len(wanted), _AT_ONCE):
        chunk = wanted[first : first + _AT_ONCE]
        rows = [{"suite": suite, "config": config, "task": task} for suite, config, task in chunk]
        await session.execute(
            insert(session, LaneKey)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["suite", "config", "task"])
        )
        named = await session.execute(
            select(*_COLUMNS).where(tuple_(_KEYS.c.suite, _KEYS.c.config, _KEYS.c.task).in_(chunk))
        )
        found.update({(suite, config, task): key_id for key_id, suite, config, task in named.all()})
    return found


async def keys_of(session: AsyncSession, ids: Collection[int]) -> dict[int, Key]:
    """The keys these numbers stand for."""
    wanted = sorted(ids)
    found: dict[int, Key] = {}
    for first in range(0, len(wanted), _AT_ONCE):
        rows = await session.execute(
            select(*_COLUMNS).where(_KEYS.c.id.in_(wanted[first : first + _AT_ONCE]))
        )
        found.update({key_id: (suite, config, task) for key_id, suite, config, task in rows.all()})
    return found


def pack(ids: Sequence[int]) -> bytes:
    """The numbers as stored: little-endian int32s, in the order given."""
    packed = array("i", ids)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def unpack(blob: bytes) -> npt.NDArray[np.int32]:
    import numpy as np  # here, not at the top: only coverage counts keys

    return np.frombuffer(blob, dtype="<i4")


def count(blobs: Sequence[bytes]) -> Counter[int]:
    """How often each number occurs over all the packed arrays."""
    if not blobs:
        return Counter()
    import numpy as np

    occurrences = np.bincount(np.concatenate([unpack(blob) for blob in blobs]))
    present = np.flatnonzero(occurrences)
    return Counter(dict(zip(present.tolist(), occurrences[present].tolist(), strict=True)))
