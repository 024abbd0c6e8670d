"""`Rerun a task…` under a report: the request `/csb run --tasks <task> --suite <its suite>` would make,
with the run's model, lanes, config, category and parallel, over the task file the run was resolved from."""

from __future__ import annotations

from bot.domain.errors import UserInputError
from bot.domain.policy import Actor
from bot.services.requests import RunRequestService
from bot.store import requests, runs
from bot.store.db import Store


class TaskRerunService:
    def __init__(self, store: Store, submitter: RunRequestService) -> None:
        self._store = store
        self._submitter = submitter

    async def rerun_task(
        self,
        run_id: int,
        pair_index: int,
        actor: Actor,
        *,
        channel_id: str,
        response_url: str | None,
        trigger_id: str | None,
    ) -> int:
        """The new request's id. The task is checked against the task file as it is now (a task since
        removed is refused in words), and the policy of `/csb run` applies to the clicker."""
        async with self._store.read() as session:
            run = await runs.get_run(session, run_id)
            request = await requests.get_request(session, runs.request_id_of(run_id))
            lanes = await runs.run_lanes(session, run_id)
        lane = next((lane for lane in lanes if lane.pair_index == pair_index), None)
        if run is None or request is None or lane is None:
            raise UserInputError("this choice is not valid any more; the run has no such task")
        if not run.state.is_final:
            raise UserInputError(f"run #{run_id} is still {run.state.value}; rerun a task once it has ended")
        spec = request.spec
        params = spec.params.model_copy(
            update={
                "suite": lane.suite,
                "suite_file": spec.task_file,
                "selection_file": None,
                "dry_run": False,
            }
        )
        # The card goes where the run's was, also when the choice came from elsewhere.
        where = request.channel_id or channel_id
        params = await self._submitter.named_tasks(params, (lane.task_id,), actor, where)
        return await self._submitter.submit(
            await self._submitter.resolve(params),
            actor=actor,
            channel_id=where,
            response_url=response_url,
            trigger_id=trigger_id,
        )
