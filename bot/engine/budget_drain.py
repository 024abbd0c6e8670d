"""Runs drained when their month's spend passes its budget's block line.

Each tick, before free slots are filled, the recorded spend of the UTC month is summed for every
category with a budget (and every model that budget names) that has a run still able to start lanes;
a run whose category or model spent past the block line is drained as `/csb cancel --drain` drains:
queued lanes dropped, running lanes finish, nothing new starts. The thread is told why (a
`BudgetDrained` event). A run an override approver approved past the line is left alone.

The month's sums are the costly part (an aggregate over the month's lanes), and they change only as
lanes end: the tick keeps them and reads them again only when it settled a lane (`spend_changed`), when
the month turns, or after `SPEND_RECHECK` (lanes settled by anything but this engine). The runs are
read every tick, so a new run is judged against the sums at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.domain.budget import BudgetLine, budget_lines, month_bounds, month_of
from bot.domain.events import BudgetDrained
from bot.domain.policy import PolicyConfig
from bot.domain.spec import Category
from bot.domain.states import UNSTOPPED_RUN_STATES, RunState
from bot.store import audit, lanes, outbox, runs, spend
from bot.store.records import Run

SPEND_RECHECK = timedelta(minutes=1)


class BudgetDrain:
    def __init__(self, policy: PolicyConfig) -> None:
        self._budgets = {
            category.value: budget
            for category in Category
            if (budget := policy.for_category(category).budget) is not None
        }
        self._spent: dict[tuple[str, str | None], float] = {}  # the month's sums as last read
        self._spent_month: str | None = None
        self._spent_read_at: datetime | None = None  # when the first of them was read

    def spend_changed(self) -> None:
        """Lanes ended (their cost is recorded): read the sums again at the next check."""
        self._spent.clear()

    async def drain_over_budget(self, session: AsyncSession, now: datetime) -> list[int]:
        """Drain every run past its budget's block line, in the tick's transaction; the ids drained."""
        if not self._budgets:
            return []
        month = month_of(now)
        start, end = month_bounds(month)
        read_at = self._spent_read_at
        if month != self._spent_month or read_at is None or not read_at <= now < read_at + SPEND_RECHECK:
            self._spent.clear()
        if not self._spent:
            self._spent_month, self._spent_read_at = month, now
        spent = self._spent

        async def spent_by(category: str, model: str | None) -> float:
            if (category, model) not in spent:
                spent[(category, model)] = await spend.month_spent(
                    session, start, end, category=category, model=model
                )
            return spent[(category, model)]

        drained: list[int] = []
        for run, category in await spend.unstopped_runs(session):
            budget = self._budgets.get(category)
            if budget is None:
                continue
            check = budget_lines(
                budget,
                category=category,
                model=run.model,
                month=month,
                category_spent=await spent_by(category, None),
                model_spent=await spent_by(category, run.model) if run.model in budget.models else 0.0,
                estimate_usd=0.0,
            )
            crossed = next((line for line in check.lines if line.crossed), None)
            if crossed is not None and await _drain(session, run, crossed, now):
                drained.append(run.id)
        return drained


async def _drain(session: AsyncSession, run: Run, line: BudgetLine, now: datetime) -> bool:
    reason = (
        f"monthly budget: {line.scope.value} {line.name} spent ${line.spent_usd:,.2f} in {line.month}, "
        f"past its block line of ${line.block_usd:,.2f}"
    )
    if not await runs.move_run(
        session,
        run.id,
        from_states=UNSTOPPED_RUN_STATES,
        to=RunState.DRAINING,
        stopped_by=None,  # no one did: the reason says it was the budget (the audit names the bot)
        stop_reason=reason,
        stop_requested_at=now,
    ):
        return False
    dropped = await lanes.cancel_queued_lanes(session, run.id, now, reason="not started: over budget")
    running = await lanes.count_running(session, run.id)
    await audit.record_run(session, run, "drain requested", now, reason=reason)
    event = BudgetDrained(
        run_id=run.id,
        scope=line.scope.value,
        name=line.name,
        month=line.month,
        spent_usd=line.spent_usd,
        block_usd=line.block_usd,
        budget_usd=line.budget_usd,
        dropped=dropped,
        running=running,
    )
    await outbox.tell_run(session, run.id, what="budget", event=event, now=now)
    return True
