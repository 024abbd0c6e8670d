"""Fill the App Home view model from the database, for one user."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.outcome import LaneStatus
from bot.domain.policy import Actor, PolicyConfig, may_approve, may_see
from bot.domain.spec import Category, LaneRole
from bot.domain.states import RunState
from bot.domain.words import plural
from bot.slack.outbound.render import load_run_card
from bot.slack.views.format import code
from bot.slack.views.home import HomeRequest, HomeResult, HomeRun, HomeView
from bot.store import homes, orphans, outbox, queue, runs
from bot.store.lanes import count_running
from bot.store.records import RunRequest


async def load_home(session: AsyncSession, user_id: str, policy: PolicyConfig, now: datetime) -> HomeView:
    """App Home is in no channel: it shows each person what `/csb status` typed outside a request's
    channel would show them (`may_see`), and its buttons are refused to anyone else all the same."""
    actor = Actor(user_id=user_id)

    def seen(request: RunRequest) -> bool:
        return may_see(policy, Category(request.category), actor, request.requester, in_its_channel=False)

    waiting = [
        HomeRequest(
            request_id=request.id,
            requester=request.requester,
            summary=_summary(request),
            can_approve=may_approve(policy, Category(request.category), actor, request.requester).allowed,
            revision=request.revision,
        )
        for request in await homes.pending_requests(session)
        if seen(request)
    ]
    my_runs = []
    for request, run in await homes.runs_of(session, user_id):
        card = await load_run_card(session, run.id, now)
        if card is not None:
            label = request.spec.suite_label
            my_runs.append(HomeRun(run.id, run.state.value, label, card.pairs_done, card.pairs_total))
    active = await runs.active_runs(session)
    return HomeView(
        user_id=user_id,
        waiting=waiting,
        my_runs=my_runs,
        runs_queued=sum(1 for run in active if run.state is RunState.QUEUED),
        runs_running=sum(1 for run in active if run.state is not RunState.QUEUED),
        lanes_running=await count_running(session),
        slots=await queue.published_slots(session),
        official=[
            await _result(session, request, run.id)
            for request, run in await homes.last_finished(session, "official")
            if seen(request)
        ],
        set_aside=await outbox.count_set_aside(session) if user_id in policy.admins else None,
        orphans=await orphans.all_orphans(session) if user_id in policy.admins else None,
    )


def _summary(request: RunRequest) -> str:
    spec = request.spec
    return (
        f"{code(spec.params.model, 100)} on {code(spec.suite_label, 100)}: "
        f"{plural(len(spec.tasks), 'task')}, `{spec.params.mode.value}`, `{request.category}`"
    )


async def _result(session: AsyncSession, request: RunRequest, run_id: int) -> HomeResult:
    spec = request.spec
    lanes = await runs.run_lanes(session, run_id)

    def rate(role: LaneRole) -> str:
        mine = [lane for lane in lanes if lane.role == role.value]
        passed = sum(1 for lane in mine if lane.state is LaneStatus.PASSED)
        return f"{passed}/{len(mine)} passed" if mine else "—"

    return HomeResult(
        run_id, spec.suite_label, spec.params.model, rate(LaneRole.BASELINE), rate(LaneRole.MCP)
    )
