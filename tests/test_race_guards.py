"""Every guarded transition holds when two writers race, each race driven on purpose, never by luck.

SQLite's database-wide write lock serialises writers, so a missing `WHERE state = expected` passes
any test that merely fires clicks at once. Here each writer is held between what it read and what it
writes (`interleave.before_write_after_read`), or writes from a read that is already stale, while the
other change lands; without the guard the late writer wins. Which guard each test pins (removing it
makes that test fail):

- lane claim, `lanes.claim_lanes` `WHERE state = 'queued'` (and the run's start, `runs.move_run`
  `WHERE state IN from_states`): `test_a_lane_claimed_from_a_stale_read_is_not_claimed_again`.
- a lane's end, `lanes.finish_lanes` `WHERE state = 'running' … FOR UPDATE` (the ids it locked and moved are
  the endings counted): `test_a_lane_end_seen_twice_is_settled_and_counted_once`.
- lease check in a claim, `Dispatcher.claim` `lease.holds(...)`:
  `test_an_engine_that_lost_the_lease_before_its_claim_starts_nothing`; taking an expired lease,
  `lease.take` `WHERE holder = seen`: `test_an_expired_lease_seen_by_two_engines_is_taken_by_one`.
- pending guard of a decision, `requests.decide` `WHERE state = 'pending'`:
  `test_a_reject_that_read_pending_before_an_approval_landed_rejects_nothing`; of an approval,
  `requests.hold_revision` `WHERE state = 'pending'` in the approval's own transaction:
  `test_an_approval_that_read_pending_before_another_launched_counts_nothing`; of an edit,
  `requests.revise` `WHERE state = 'pending'`:
  `test_an_edit_that_read_pending_before_an_approval_landed_changes_nothing`.
- revision: an approval counts only for the revision it read, `requests.hold_revision`
  `WHERE revision = seen` (the click-time check against the card's revision comes before it and
  cannot see an edit that commits after the click's reads):
  `test_an_approval_racing_an_edit_neither_counts_nor_launches`; `requests.decide`
  `WHERE revision = seen`: `test_a_reject_of_an_older_revision_rejects_nothing`; `requests.revise`
  `WHERE revision = seen`: `test_two_edits_of_one_revision_keep_the_first`. Approvals of an older
  revision no longer count (`approvals.approvers` `WHERE revision = current`):
  `test_e2e_gate.test_edit_makes_a_new_revision_and_voids_approvals`.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from engine_kit import engine_kit
from harness import CHANNEL, Harness, running_bot
from idle import run_until_idle
from interleave import before_write_after_read
from lane_waits import running_count
from store_reads import all_runs, audit_actions
from test_e2e_gate import prefilled_values
from test_e2e_run import card_text, request_card
from waiting import until

from bot.domain.outcome import LaneStatus, TrialOutcome
from bot.engine.settle import apply, decide
from bot.executors.processes import this_host
from bot.playground import ADMIN, APPROVER, REQUESTER
from bot.store import lanes, lease, requests, runs
from bot.store.lanes import LaneClaim
from bot.store.lease import Claimant
from bot.store.models import RequestState, RunRequest, RunState

pytestmark = pytest.mark.slow


# -- the approval gate, clicked through Slack --------------------------------------------------------


async def open_modal(h: Harness, user: str, card: dict[str, Any], label: str) -> str:
    """Click a card button that opens a modal; the new modal's view id."""
    before = set(h.standin.views)
    await h.driver.click_button(user, CHANNEL, card["ts"], label)
    await h.deliver()
    (view_id,) = set(h.standin.views) - before
    return view_id


async def submit_reject(h: Harness, user: str, view_id: str, reason: str = "not this week") -> None:
    values = {"reject.reason": {"value": {"type": "plain_text_input", "value": reason}}}
    assert (await h.driver.submit_view(user, view_id, values)).status == 200


async def submit_edit(h: Harness, user: str, view_id: str, parallel: int) -> None:
    values = prefilled_values(h.standin.views[view_id])
    values["edit.parallel"]["value"]["value"] = str(parallel)
    assert (await h.driver.submit_view(user, view_id, values)).status == 200


async def request_row(h: Harness, request_id: int = 1) -> RunRequest:
    async with h.bot.store.read() as session:
        request = await requests.get_request(session, request_id)
    assert request is not None
    return request


def parallel_of(request: RunRequest) -> int:
    return request.spec.params.parallel or 0


async def run_parallels(h: Harness) -> list[int]:
    return [run.parallel for run in await all_runs(h.bot.store)]


async def approval_lands(h: Harness, card: dict[str, Any]) -> None:
    """Another approver's click, committed: the deciding approval, so the run is queued."""
    await h.driver.click_button(ADMIN, CHANNEL, card["ts"], "Approve")

    async def approved() -> bool:
        return (await request_row(h)).state is RequestState.APPROVED

    await until(approved, "the other approval to commit")


async def edit_lands(h: Harness, user: str, view_id: str, parallel: int) -> None:
    """Another person's edit, committed: the request is at its next revision."""
    await submit_edit(h, user, view_id, parallel)

    async def revised() -> bool:
        return (await request_row(h)).revision == 2

    await until(revised, "the other edit to commit")


async def test_a_reject_that_read_pending_before_an_approval_landed_rejects_nothing(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        view_id = await open_modal(h, APPROVER, card, "Reject")
        with before_write_after_read(h.bot.store, lambda: approval_lands(h, card)) as window:
            await submit_reject(h, APPROVER, view_id)  # reads `pending`, then the approval commits
            await h.deliver()
        assert window.opened
        request = await request_row(h)
        assert request.state is RequestState.APPROVED and request.decided_by == ADMIN
        assert len(await all_runs(h.bot.store)) == 1
        assert await audit_actions(h.bot.store) == ["requested", "approval", "approved"]
        assert "nothing was rejected" in h.ephemeral_texts(APPROVER)[-1]
        shown = card_text(h.last_card())
        assert "Approved" in shown and "Rejected" not in shown


async def test_an_approval_that_read_pending_before_another_launched_counts_nothing(
    tmp_path: Path, db_url: str
) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h)
        with before_write_after_read(h.bot.store, lambda: approval_lands(h, card)) as window:
            assert (await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
            await h.deliver()
        assert window.opened
        request = await request_row(h)
        assert request.state is RequestState.APPROVED and request.decided_by == ADMIN
        assert len(await all_runs(h.bot.store)) == 1
        assert await audit_actions(h.bot.store) == ["requested", "approval", "approved", "refused approve"]
        assert f"already approved by <@{ADMIN}>" in h.ephemeral_texts(APPROVER)[-1]


async def test_a_reject_of_an_older_revision_rejects_nothing(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 4")
        reject_view = await open_modal(h, APPROVER, card, "Reject")  # the modal holds revision 1
        edit_view = await open_modal(h, REQUESTER, card, "Edit")
        await submit_edit(h, REQUESTER, edit_view, parallel=8)
        await h.deliver()
        assert (await request_row(h)).revision == 2
        await submit_reject(h, APPROVER, reject_view)
        await h.deliver()
        request = await request_row(h)
        assert request.state is RequestState.PENDING and request.revision == 2
        assert await audit_actions(h.bot.store) == ["requested", "edited"]
        assert "nothing was rejected" in h.ephemeral_texts(APPROVER)[-1]


async def test_an_approval_racing_an_edit_neither_counts_nor_launches(tmp_path: Path, db_url: str) -> None:
    """The approver saw revision 1; the edit to revision 2 commits between the click's reads and its
    write. The approval must not count for revision 2 nor launch what the approver never saw."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 4")
        edit_view = await open_modal(h, REQUESTER, card, "Edit")
        with before_write_after_read(h.bot.store, lambda: edit_lands(h, REQUESTER, edit_view, 8)) as window:
            assert (await h.driver.click_button(APPROVER, CHANNEL, card["ts"], "Approve")).status == 200
            await h.deliver()
        assert window.opened
        request = await request_row(h)
        assert request.state is RequestState.PENDING and request.revision == 2
        assert len(await all_runs(h.bot.store)) == 0
        assert await audit_actions(h.bot.store) == [
            "requested",
            "edited",
            "refused approve",
        ]  # counted for neither
        assert h.ephemeral_texts(APPROVER), "the approver was not told the click changed nothing"
        shown = card_text(h.last_card())
        assert "revision 2" in shown and "Approvals: 1" not in shown


async def test_an_edit_that_read_pending_before_an_approval_landed_changes_nothing(
    tmp_path: Path, db_url: str
) -> None:
    """An approved request keeps the parameters that were approved, which are the ones its run runs."""
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 4")
        edit_view = await open_modal(h, REQUESTER, card, "Edit")
        with before_write_after_read(h.bot.store, lambda: approval_lands(h, card)) as window:
            await submit_edit(h, REQUESTER, edit_view, parallel=8)  # reads `pending`, then approval
            await h.deliver()
        assert window.opened
        request = await request_row(h)
        assert request.state is RequestState.APPROVED and request.revision == 1
        assert parallel_of(request) == 4 and await run_parallels(h) == [4]
        assert await audit_actions(h.bot.store) == ["requested", "approval", "approved"]
        assert "changed while you edited it" in h.ephemeral_texts(REQUESTER)[-1]


async def test_two_edits_of_one_revision_keep_the_first(tmp_path: Path, db_url: str) -> None:
    async with running_bot(tmp_path, csb_database_url=db_url) as h:
        card = await request_card(h, "run csb_sdlc_fix --parallel 4")
        late_view = await open_modal(h, ADMIN, card, "Edit")
        first_view = await open_modal(h, REQUESTER, card, "Edit")
        with before_write_after_read(h.bot.store, lambda: edit_lands(h, REQUESTER, first_view, 8)) as window:
            await submit_edit(h, ADMIN, late_view, parallel=6)  # both modals hold revision 1
            await h.deliver()
        assert window.opened
        request = await request_row(h)
        assert request.revision == 2 and parallel_of(request) == 8
        assert await audit_actions(h.bot.store) == ["requested", "edited"]
        assert "changed while you edited it" in h.ephemeral_texts(ADMIN)[-1]


# -- the engine: lanes and the lease --------------------------------------------------------------


async def test_a_lane_claimed_from_a_stale_read_is_not_claimed_again(tmp_path: Path, db_url: str) -> None:
    """Two claimers (two engines on PostgreSQL, say) both read the same lanes as queued; the one that
    writes second moves nothing, and the run is marked started once."""
    async with engine_kit(tmp_path, url=db_url) as kit:
        run_id = await kit.approve(parallel=4)
        now = kit.clock.now()
        seen = []
        for _ in range(2):  # both read before either writes
            async with kit.store.read() as session:
                units = await lanes.ready_units(session, run_id, now, max_lanes=4)
            seen.append([lane.id or 0 for unit in units for lane in unit])
        assert seen[0] == seen[1] and len(seen[0]) == 4
        moved, started = [], []
        for claimer, ids in enumerate(seen):
            async with kit.store.write() as session:
                claims = [LaneClaim(lane_id, f"home-{claimer}", f"{lane_id}.{claimer}") for lane_id in ids]
                moved.append(await lanes.claim_lanes(session, claims, now=now, host=this_host()))
                started.append(await runs.mark_run_started(session, run_id, now))
        assert moved == [4, 0] and started == [True, False]
        claimed = [lane for lane in await kit.lanes(run_id) if lane.id in seen[0]]
        assert {lane.state for lane in claimed} == {LaneStatus.RUNNING}
        assert {lane.attempt for lane in claimed} == {1}
        assert {lane.marker for lane in claimed} == {f"{lane.id}.0" for lane in claimed}
        assert (await kit.run(run_id)).state is RunState.RUNNING


async def test_an_engine_that_lost_the_lease_before_its_claim_starts_nothing(
    tmp_path: Path, db_url: str
) -> None:
    """The engine checked the lease at the top of its tick; before its claim, the lease expired and a
    second engine took it. Only the holder may start lanes, so the late one starts none."""
    async with engine_kit(tmp_path, url=db_url) as kit:
        run_id = await kit.approve(parallel=4)
        late, successor = kit.engine, kit.new_engine()
        hold = late.lease.hold

        async def hold_then_lose_it() -> Any:
            holding = await hold()
            kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
            assert (await successor.lease.hold()).held
            return holding

        setattr(late.lease, "hold", hold_then_lose_it)  # noqa: B010 (hook this one engine's heartbeat)
        await late.tick()
        assert running_count(late.executor) == 0
        assert set((await kit.states(run_id)).values()) == {"queued"}
        assert (await kit.run(run_id)).state is RunState.QUEUED

        await run_until_idle(successor, kit.store)
        ended = await kit.lanes(run_id)
        assert {lane.state for lane in ended} <= {LaneStatus.PASSED, LaneStatus.FAILED}
        assert {lane.attempt for lane in ended} == {1}
        assert len(kit.trial_dirs()) == len(ended)  # every lane ran once, by the holder


async def test_a_lane_end_seen_twice_is_settled_and_counted_once(tmp_path: Path) -> None:
    """Two watchers (or a watcher and a reconciliation) both saw the lane running and both settle its
    end: the second moves nothing and counts nothing, even when it saw the same outcome."""
    async with engine_kit(tmp_path) as kit:
        run_id = await kit.approve(parallel=4)
        now = kit.clock.now()
        async with kit.store.write() as session:
            first, second = (await runs.run_lanes(session, run_id))[:2]
            claims = [LaneClaim(lane.id or 0, "home-0", f"{lane.id}.m") for lane in (first, second)]
            assert await lanes.claim_lanes(session, claims, now=now, host=this_host()) == 2
            assert await runs.mark_run_started(session, run_id, now)
        async with kit.store.read() as session:
            seen = await lanes.running_lanes(session)  # both settlers read this before either writes
        passed = TrialOutcome(status=LaneStatus.PASSED, reward=1.0)
        settled = []
        for _ in range(2):
            endings = [
                decide(lane, RunState.RUNNING, passed, exit_code=0, now=now, config=kit.config)
                for lane in seen
            ]
            async with kit.store.write() as session:
                settled.append(await apply(session, endings, now, kit.config))
        assert settled == [2, 0]
        run = await kit.run(run_id)
        assert run.attempts_done == 2
        assert {lane.state for lane in await kit.lanes(run_id) if lane.id in {first.id, second.id}} == {
            LaneStatus.PASSED
        }


async def test_an_expired_lease_seen_by_two_engines_is_taken_by_one(tmp_path: Path) -> None:
    """Both read the same expired holder; the take is guarded on that holder, so the second fails."""
    async with engine_kit(tmp_path) as kit:
        assert (await kit.engine.lease.hold()).held
        kit.clock.advance(timedelta(seconds=kit.config.lease_ttl_sec + 1))
        now = kit.clock.now()
        async with kit.store.read() as session:
            expired = await lease.get_lease(session)
        assert expired is not None and expired.expires_at <= now
        taken = []
        for name in ("first", "second"):
            claimant = Claimant(holder=f"{this_host()}:{name}", host=this_host(), pid=os.getpid())
            async with kit.store.write() as session:
                taken.append(
                    await lease.take(
                        session,
                        claimant,
                        now=now,
                        ttl=timedelta(seconds=20),
                        slots=4,
                        expected_holder=expired.holder,
                    )
                )
        assert taken == [True, False]
        async with kit.store.read() as session:
            holder = await lease.get_lease(session)
        assert holder is not None and holder.holder == f"{this_host()}:first"
