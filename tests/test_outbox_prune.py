"""Old sent outbox rows are pruned by the timer holder, on SQLite and PostgreSQL: what goes (sent before
the keeping age), what stays (sent since, not yet sent, set aside, once-ever keys, every audit row),
in batches of at most the batch size, and only in the process holding the lease. The clock is moved,
never waited for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from bot.domain import outbox_keys
from bot.domain.clock import ManualClock
from bot.domain.errors import InfraError
from bot.engine.lease import LeaseKeeper
from bot.engine.outbox_pruner import OutboxPruner
from bot.settings import Settings
from bot.store import audit, outbox
from bot.store.db import Store
from bot.store.models import AuditEvent, OutboxItem, Run, RunRequest
from bot.store.records import OutboxKind, OutboxState

START = datetime(2026, 1, 1, tzinfo=UTC)
KEEP = timedelta(days=30)


async def _queue(store: Store, at: datetime, kind: OutboxKind, target: str, *, then: str) -> None:
    """One row queued at `at`, then sent, set aside, or left pending."""
    async with store.write() as session:
        await outbox.enqueue(session, kind=kind, target=target, now=at, run_id=1, text="x")
    async with store.read() as session:
        (row,) = [item for item in await outbox.due(session, at) if item.target == target]
    async with store.write() as session:
        if then == "sent":
            assert await outbox.mark_sent(session, row, at)
        elif then == "set aside":
            await outbox.set_aside(session, row.id, "channel_not_found")


async def _history(store: Store) -> None:
    """A request and its run, their audit row, and outbox rows of every kind of fate, old and new."""
    async with store.write() as session:
        session.add(
            RunRequest(id=1, spec_json="{}", spec_hash="h", requester="U1", channel_id="C1", created_at=START)
        )
        await session.flush()
        session.add(Run(id=1, request_id=1, run_dir="r", model="m", parallel=1, created_at=START))
        await audit.record(session, request_id=1, action="approved", actor="U2", at=START, spec_hash="h")
    for n in range(5):  # five old redraws, sent: they go
        await _queue(
            store, START + timedelta(minutes=n), OutboxKind.STATUS, outbox_keys.status(1), then="sent"
        )
    await _queue(store, START, OutboxKind.EPHEMERAL, outbox_keys.ephemeral("old"), then="sent")  # goes
    await _queue(store, START, OutboxKind.NOTICE, outbox_keys.milestone(1, "started"), then="sent")
    await _queue(store, START, OutboxKind.SUMMARY, outbox_keys.summary(1), then="sent")
    await _queue(store, START, OutboxKind.CARD, outbox_keys.card(1), then="pending")
    await _queue(store, START, OutboxKind.EPHEMERAL, outbox_keys.ephemeral("refused"), then="set aside")
    recent = START + KEEP + timedelta(days=5)
    await _queue(store, recent, OutboxKind.STATUS, outbox_keys.status(1), then="sent")


async def _left(store: Store) -> list[tuple[str, OutboxState]]:
    async with store.read() as session:
        rows = await session.execute(select(OutboxItem.target, OutboxItem.state).order_by(OutboxItem.id))
        return [(target, OutboxState(state)) for target, state in rows.all()]


async def _audit_rows(store: Store) -> int:
    async with store.read() as session:
        return int((await session.execute(select(func.count()).select_from(AuditEvent))).scalar_one())


async def test_only_rows_sent_before_the_keeping_age_go(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    await _history(store)
    clock = ManualClock(START + KEEP + timedelta(days=6))  # a day after the recent row was sent
    pruner = OutboxPruner(store, clock, KEEP, may_prune=lambda: True, batch=2)
    pruned = await pruner.tick()
    assert (pruned.rows, pruned.batches) == (6, 3)  # five redraws and a reply, two at a time
    assert await _left(store) == [
        ("milestone:1:started", OutboxState.SENT),  # once ever: `exists` must still find it
        ("summary:1", OutboxState.SENT),
        ("card:1", OutboxState.PENDING),  # not sent yet, however old
        ("ephemeral:refused", OutboxState.DEAD),  # set aside: a message somebody did not get
        ("status:1", OutboxState.SENT),  # sent within the keeping age
    ]
    assert await _audit_rows(store) == 1  # the record
    assert (await pruner.tick()).rows == 0  # nothing more, and nothing kept is taken the next time
    clock.advance(timedelta(days=30))  # now the recent redraw is old too
    assert (await pruner.tick()).rows == 1
    await store.close()


async def test_only_the_lease_holder_prunes(db_url: str) -> None:
    store = Store(db_url)
    await store.create_tables()
    await _history(store)
    clock = ManualClock(START + KEEP + timedelta(days=1))
    holder, other = (LeaseKeeper(store, clock, ttl_sec=20, slots=1) for _ in range(2))
    assert (await holder.hold()).held and not (await other.hold()).held
    waiting = OutboxPruner(store, clock, KEEP, may_prune=lambda: other.held)
    assert (await waiting.tick()).rows == 0
    assert len(await _left(store)) == 11
    holding = OutboxPruner(store, clock, KEEP, may_prune=lambda: holder.held)
    assert (await holding.tick()).rows == 6
    await store.close()


@pytest.mark.parametrize("days", ["0", "-1"])
def test_a_keeping_age_of_zero_or_less_is_a_config_error(tmp_path: Path, days: str) -> None:
    config = tmp_path / "csb-bot.toml"
    config.write_text(f"[notifier]\nkeep_sent_days = {days}\n")
    settings = Settings(
        slack_bot_token="xoxb-prune-test",
        slack_signing_secret="prune-test-secret",
        csb_database_url=f"sqlite:///{tmp_path / 'bot.db'}",
        csb_config=config,
    )
    with pytest.raises(InfraError) as refused:
        settings.load_config()
    assert str(refused.value).endswith("is invalid: notifier.keep_sent_days: Input should be greater than 0")
