"""`InFlight`: the work after acks waits for the requests still being answered, but never for long."""

from __future__ import annotations

import asyncio

from bot.slack.inbound.inflight import InFlight


async def _turns(count: int = 20) -> None:
    """Let every ready task run a few steps (no timer: each step is one pass of the event loop)."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_work_waits_for_requests_being_answered_and_starts_once_they_are_acked() -> None:
    inflight = InFlight(work_slots=4, answers_first_sec=60.0)
    ran: list[str] = []

    async def work(person: str) -> None:
        async with inflight.turn(person):
            ran.append(person)

    with inflight.answering():
        inflight.start(work("U1"), lambda exc: None)
        inflight.start(work("U2"), lambda exc: None)
        await _turns()
        assert ran == []  # a request is still being answered: its ack goes first
    await inflight.wait_idle()
    assert ran == ["U1", "U2"]


async def test_work_waits_for_the_answers_no_longer_than_its_bound() -> None:
    """A burst that never ends (a request always arriving) does not starve the work."""
    inflight = InFlight(work_slots=4, answers_first_sec=0.01)
    done = asyncio.Event()

    async def work() -> None:
        async with inflight.turn("U1"):
            done.set()

    with inflight.answering():
        inflight.start(work(), lambda exc: None)
        await asyncio.wait_for(done.wait(), timeout=30)
    await inflight.wait_idle()


async def test_work_started_after_an_ack_is_counted_until_it_ends_and_its_error_reported() -> None:
    inflight = InFlight()
    release = asyncio.Event()
    failures: list[BaseException] = []

    async def work() -> None:
        await release.wait()
        raise ValueError("the work failed")

    inflight.start(work(), failures.append)
    idle = asyncio.create_task(inflight.wait_idle())
    await _turns()
    assert not idle.done()  # counted while it runs
    release.set()
    await asyncio.wait_for(idle, timeout=30)
    assert [str(exc) for exc in failures] == ["the work failed"]


async def test_one_persons_work_runs_in_arrival_order() -> None:
    inflight = InFlight(work_slots=1)
    ran: list[int] = []

    async def work(number: int) -> None:
        async with inflight.turn("U1"):
            await asyncio.sleep(0)
            ran.append(number)

    for number in range(5):
        inflight.start(work(number), lambda exc: None)
    await inflight.wait_idle()
    assert ran == [0, 1, 2, 3, 4]
