"""Run requests from `/csb run` to a pending card, and its edits: each state change in one transaction."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from bot.csb import named_tasks
from bot.csb.catalog import Catalog
from bot.csb.coverage_files import stamp
from bot.domain import events, outbox_keys
from bot.domain.clock import Clock
from bot.domain.command_line import USAGE
from bot.domain.errors import PolicyError, UserInputError
from bot.domain.events import NotInChannel, RequestEdited
from bot.domain.mrkdwn import clip
from bot.domain.policy import BOT_ACTOR, Actor, PolicyConfig, may_act_from, may_control, may_request
from bot.domain.spec import Category, RunParams, RunSpec
from bot.domain.states import RequestState
from bot.services.checks import CheckRunner, RequestChecks
from bot.services.refusals import record_refusal
from bot.settings import EngineConfig
from bot.store import audit, outbox, requests
from bot.store.db import Store
from bot.store.records import NewRequest, OutboxKind, RunRequest

log = logging.getLogger(__name__)

_EDIT_FIELDS = (
    "model",
    "suite",
    "suite_file",
    "selection_file",
    "mode",
    "full_config",
    "parallel",
    "category",
)


async def withdraw_unpostable(session: AsyncSession, request_id: int, now: datetime) -> None:
    """Slack refused the card because the bot is not in the channel: a card that cannot be posted cannot
    be approved, so the request is closed (never left pending) and the requester told how to fix it.

    In the caller's transaction, the one that sets the card's row aside."""
    request = await requests.get_request(session, request_id)
    reason = "the bot is not in the channel, so the card could not be posted"
    if request is not None:
        await bot_decides(
            session,
            request,
            to=RequestState.REJECTED,
            action="withdrawn",
            now=now,
            reason=reason,
            audit_reason=reason,
        )
    await outbox.enqueue(
        session,
        kind=OutboxKind.EPHEMERAL,
        target=outbox_keys.ephemeral(f"{outbox_keys.card(request_id)}:not_in_channel"),
        now=now,
        request_id=request_id,
        text=events.dump(NotInChannel(request_id=request_id)),
    )


async def bot_decides(
    session: AsyncSession,
    request: RunRequest,
    *,
    to: RequestState,
    action: str,
    now: datetime,
    reason: str,
    audit_reason: str | None,
) -> bool:
    """The bot closes a pending request on its own (expired, withdrawn): decided and audited in the
    caller's transaction. False, and nothing recorded, when it was decided or edited meanwhile.

    `reason` is shown on the card; the audit trail keeps `audit_reason`."""
    if not await requests.decide(
        session, request.id, to=to, actor=BOT_ACTOR, now=now, revision=request.revision, reason=reason
    ):
        return False
    await audit.record(
        session,
        request_id=request.id,
        action=action,
        actor=BOT_ACTOR,
        at=now,
        spec_hash=request.spec_hash,
        revision=request.revision,
        reason=audit_reason,
    )
    return True


class RunRequestService:
    def __init__(
        self,
        store: Store,
        catalog: Catalog,
        checks: CheckRunner,
        policy: PolicyConfig,
        engine_config: EngineConfig,
        clock: Clock,
    ) -> None:
        self._store = store
        self._catalog = catalog
        self._checks = checks
        self._policy = policy
        self._engine = engine_config
        self._clock = clock

    async def resolve(self, params: RunParams) -> RunSpec:
        """Resolve against the checkout off the event loop (it reads the suite file and task folders)."""
        spec = await asyncio.to_thread(self._catalog.resolve, params, self._engine.default_parallel)
        if len(spec.lanes) > spec.parallel:
            raise UserInputError(
                f"a {params.mode.value} run starts both lanes of a task together, so it needs "
                f"`--parallel` of at least {len(spec.lanes)} (got {spec.parallel})",
                hint=USAGE,
            )
        limit = self._policy.for_category(params.category).max_parallel
        if spec.parallel > limit:
            raise UserInputError(
                f"`--parallel {spec.parallel}` is above the limit for {params.category.value} runs: "
                f"a whole number from {len(spec.lanes)} to {limit}",
                hint=USAGE,
            )
        return spec

    async def named_tasks(
        self, params: RunParams, task_ids: tuple[str, ...], actor: Actor, channel_id: str
    ) -> RunParams:
        """`/csb run --tasks`: `params` over a selection file, in CSB's shape, of just the tasks named
        (checked against the task file, narrowed by `--suite`). Who may not ask for the run gets no file."""
        verdict = may_request(self._policy, params.category, actor, channel_id)
        if not verdict.allowed:
            raise PolicyError(verdict.reason)
        picked = await asyncio.to_thread(
            named_tasks.pick,
            self._catalog,
            params.task_file,
            params.suite,
            task_ids,
            self._engine.quick_rerun_max_tasks,
            stamp(self._clock.now()),
        )
        return params.model_copy(
            update={"suite": None, "suite_file": None, "selection_file": picked.selection_file}
        )

    def parallel_range(self, category: Category) -> tuple[int, int]:
        """`--parallel` for `category`: the default when it is not given, and the policy's maximum."""
        return self._engine.default_parallel, self._policy.for_category(category).max_parallel

    async def preflight(self, spec: RunSpec) -> RequestChecks:
        """The checks a request for `spec` would show on its card, without making one (`--dry-run`)."""
        return await self._checks.run(spec)

    async def submit(
        self,
        spec: RunSpec,
        *,
        actor: Actor,
        channel_id: str,
        response_url: str | None,
        trigger_id: str | None = None,
    ) -> int:
        """Record a pending request with its checks and queue its approval card. A slash command Slack
        delivered again (same `trigger_id`, to this process or another) gets the request it made."""
        category = spec.params.category
        verdict = may_request(self._policy, category, actor, channel_id)
        if not verdict.allowed:  # no request exists yet, so no audit trail: the log keeps it
            log.info("refused request by %s in %s: %s", actor.user_id, channel_id, verdict.reason)
            raise PolicyError(verdict.reason)
        checks = await self._checks.run(spec)
        now = self._clock.now()
        expiry = timedelta(hours=self._policy.for_category(category).expiry_hours)
        async with self._store.write() as session:
            request = await requests.create_request(
                session,
                NewRequest(
                    spec=spec,
                    requester=actor.user_id,
                    channel_id=channel_id,
                    response_url=response_url,
                    created_at=now,
                    category=category.value,
                    checks_json=checks.model_dump_json(),
                    expires_at=now + expiry,
                    trigger_id=trigger_id,
                ),
            )
            if request is None:
                made = await requests.by_trigger(session, trigger_id or "")
                assert made is not None
                return made.id
            await audit.record(
                session,
                request_id=request.id,
                action="requested",
                actor=actor.user_id,
                at=now,
                spec_hash=request.spec_hash,
            )
            await outbox.redraw_card(session, request.id, now)
        return request.id

    async def load(self, request_id: int) -> RunRequest:
        async with self._store.read() as session:
            request = await requests.get_request(session, request_id)
        if request is None:
            raise UserInputError(f"request #{request_id} does not exist")
        return request

    async def authorize(self, request: RunRequest, actor: Actor, action: str) -> None:
        """Edit and reject: only a pending request, by its requester, an approver or an admin.

        A refusal is logged and kept in the request's audit trail before it is raised."""
        error: UserInputError | PolicyError | None = None
        if request.state is not RequestState.PENDING:
            error = UserInputError(
                f"request #{request.id} is already {request.state.value}; nothing to {action}"
            )
        else:
            verdict = may_control(
                self._policy, Category(request.category), actor, request.requester, action=action
            )
            error = None if verdict.allowed else PolicyError(verdict.reason)
        if error is not None:
            await self.refused(request, action, actor, str(error))
            raise error

    async def authorize_sight(
        self, request_id: int, actor: Actor, channel_id: str | None, action: str
    ) -> None:
        """A click on request (or run) `request_id` from `channel_id` (None: App Home): refused, and kept in
        the audit trail, when `/csb status` there would not show this person the request's details."""
        request = await self.load(request_id)
        in_channel = channel_id is not None and channel_id == request.channel_id
        verdict = may_act_from(self._policy, Category(request.category), actor, request.requester, in_channel)
        if not verdict.allowed:
            await self.refused(request, action, actor, verdict.reason)
            raise PolicyError(verdict.reason)

    async def refused(self, request: RunRequest, action: str, actor: Actor, reason: str) -> None:
        await record_refusal(
            self._store, self._clock, request, action=action, actor=actor.user_id, reason=reason
        )

    async def edit(self, request_id: int, revision: int, params: RunParams, actor: Actor) -> str:
        """A new revision from the Edit modal: voids earlier approvals; returns what changed."""
        request = await self.load(request_id)
        await self.authorize(request, actor, "edit")
        # The editor shapes the new revision, so they are held to the requester's rules for it.
        verdict = may_request(self._policy, params.category, actor, request.channel_id)
        if not verdict.allowed:
            await self.refused(request, "edit", actor, verdict.reason)
            raise PolicyError(f"your edit was not saved: {verdict.reason}")
        old = request.spec
        spec = await self.resolve(params)
        checks = await self._checks.run(spec)
        change = describe_change(old.params, spec.params) or "nothing changed"
        now = self._clock.now()
        async with self._store.write() as session:
            revised = await requests.revise(
                session,
                request_id,
                revision=revision,
                spec_json=spec.model_dump_json(),
                spec_hash=spec.spec_hash(),
                category=spec.params.category.value,
                checks_json=checks.model_dump_json(),
                change_note=events.dump(
                    RequestEdited(
                        user=actor.user_id, revision=revision + 1, change=clip(change, CHANGE_SHOWN)
                    )
                ),
            )
            if not revised:
                raise UserInputError(f"request #{request_id} changed while you edited it; open Edit again")
            await audit.record(
                session,
                request_id=request_id,
                action="edited",
                actor=actor.user_id,
                at=now,
                spec_hash=spec.spec_hash(),
                revision=revision + 1,
                reason=change,
            )
            await outbox.redraw_card(session, request_id, now)
        return change


CHANGE_SHOWN = 1500  # the change on the card; the audit trail keeps it whole


def describe_change(old: RunParams, new: RunParams) -> str:
    """`model: a → b; parallel: 4 → 8`, for the card and the audit trail."""
    parts = []
    for field in _EDIT_FIELDS:
        before, after = getattr(old, field), getattr(new, field)
        if before != after:
            parts.append(f"{field}: {_show(before)} → {_show(after)}")
    if old.allow_unpaired != new.allow_unpaired:
        parts.append(f"allow_unpaired: {old.allow_unpaired} → {new.allow_unpaired}")
    return "; ".join(parts)


def _show(value: object) -> str:
    if value is None:
        return "default"
    return str(getattr(value, "value", value))
