"""Fill the App Home view model from the database, for one user."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.policy import Actor, PolicyConfig, may_approve, may_see
from bot.domain.run_summary import LaneTally, pair_counts
from bot.domain.spec import Category
from bot.domain.states import RunState
from bot.domain.words import plural
from bot.slack.views.format import code
from bot.slack.views.home import HomeRequest, HomeResult, HomeRun, HomeView
from bot.store import homes, orphans, outbox, queue, runs, summaries
from bot.store.lanes import count_running
from bot.store.records import RunRequest, RunSummary

MY_RUNS_SHOWN = 10
OFFICIAL_SHOWN = 5


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
    my_runs = await _my_runs(session, user_id)
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
            _result(summary)
            for summary in await summaries.latest(session, "official", OFFICIAL_SHOWN)
            if may_see(policy, Category(summary.category), actor, summary.requester, in_its_channel=False)
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


async def _my_runs(session: AsyncSession, user_id: str) -> list[HomeRun]:
    """Someone's latest runs: the closed ones from their summaries, the few under way from their lanes."""
    live = await homes.live_runs_of(session, user_id, MY_RUNS_SHOWN)
    states = await summaries.pair_states(session, [run.id for _, run in live])
    shown = [
        HomeRun(run.id, run.state.value, request.spec.suite_label, *pair_counts(states[run.id]))
        for request, run in live
    ]
    shown += [
        HomeRun(s.run_id, s.state.value, s.suite_label, s.figures.pairs_done, s.figures.pairs_total)
        for s in await summaries.of_requester(session, user_id, MY_RUNS_SHOWN)
    ]
    return sorted(shown, key=lambda run: run.run_id, reverse=True)[:MY_RUNS_SHOWN]


def _result(summary: RunSummary) -> HomeResult:
    def rate(tally: LaneTally) -> str:
        return f"{tally.passed}/{tally.lanes} passed" if tally.lanes else "—"

    figures = summary.figures
    return HomeResult(
        summary.run_id,
        summary.suite_label,
        summary.model,
        rate(figures.baseline_lanes),
        rate(figures.mcp_lanes),
    )
