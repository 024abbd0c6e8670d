"""The composition root: build every part from settings, with the clock and Slack client injected."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.csb.catalog import Catalog
from bot.csb.docker_daemon import needs_docker
from bot.domain.clock import Clock, SystemClock
from bot.domain.redact import RedactingFilter, Redactor
from bot.engine import Engine, build_engine
from bot.engine.accounts import default_parallel, discover_homes, usable
from bot.engine.outbox_pruner import OutboxPruner
from bot.engine.promotion_runner import HOLD_ENV
from bot.services.accounts import AccountService
from bot.services.approvals import ApprovalService
from bot.services.checks import CheckRunner
from bot.services.compare import CompareService
from bot.services.coverage import CoverageService
from bot.services.home import HomeService
from bot.services.lane_restart import LaneRestartService
from bot.services.promotion import PromotionService
from bot.services.promotion_gate import PromotionGate
from bot.services.queries import QueryService
from bot.services.replays import ReplayGuard
from bot.services.reply_queue import ReplyService
from bot.services.requests import RunRequestService
from bot.services.run_control import RunControlService
from bot.services.spend import SpendService
from bot.services.task_rerun import TaskRerunService
from bot.settings import BotConfig, Settings
from bot.slack.app import create_app, create_client
from bot.slack.inbound.commands import CommandRouter
from bot.slack.inbound.decisions import DecisionHandler
from bot.slack.inbound.directory import Directory
from bot.slack.inbound.identity import SlackIdentity
from bot.slack.inbound.inflight import InFlight
from bot.slack.inbound.listeners.coverage_clicks import CoverageClicks
from bot.slack.inbound.listeners.promotion_clicks import PromotionClicks
from bot.slack.inbound.listeners.run_control import RunControlClicks
from bot.slack.outbound.direct_reply import reply_now
from bot.slack.outbound.notifier import Notifier
from bot.store.db import Store


@dataclass
class Bot:
    settings: Settings
    config: BotConfig
    store: Store
    engine: Engine
    notifier: Notifier
    approvals: ApprovalService
    app: AsyncApp
    inflight: InFlight
    identity: SlackIdentity
    redact: Redactor  # every secret the bot holds, for whatever text leaves it
    pruner: OutboxPruner

    def redact_logs(self) -> None:
        """Every handler of the root logger hides the bot's secrets (call once, in the process serving)."""
        for handler in logging.getLogger().handlers:
            handler.addFilter(RedactingFilter(self.redact))

    async def start(self) -> None:
        await self.store.create_tables()

    async def deliver_tick(self) -> None:
        """The notifier's timer runs only in the process holding the engine lease: two bots never race.

        It starts a round and returns: a call Slack is slow to answer must not hold the timer."""
        if self.engine.lease.held:
            self.notifier.start_round()

    async def gate_tick(self) -> None:
        """Expire requests past their time and remind approvers; only in the lease holder, like the engine."""
        if self.engine.lease.held:
            await self.approvals.expire_due()
            await self.approvals.remind_due()

    async def prune_tick(self) -> None:
        """Old sent outbox rows go; the pruner itself asks whether this process holds the lease."""
        await self.pruner.tick()


def with_csb_default_parallel(config: BotConfig, environ: Mapping[str, str], clock: Clock) -> BotConfig:
    """Without `default_parallel` in the config file, CSB's rule: 6 lanes per account whose token is
    live when the bot starts; on Daytona its task cap."""
    if "default_parallel" in config.engine.model_fields_set:
        return config
    home = environ.get("HOME", os.path.expanduser("~"))
    homes = discover_homes(config.engine.account_homes, home)
    ready = sum(1 for account in homes if usable(account, clock.now(), fallback=False))
    daytona = config.engine.daytona or environ.get("HARBOR_ENV") == "daytona"
    parallel = default_parallel(ready, daytona=daytona, env=environ)
    return config.model_copy(
        update={"engine": config.engine.model_copy(update={"default_parallel": parallel})}
    )


def build_bot(
    settings: Settings,
    *,
    clock: Clock | None = None,
    client: AsyncWebClient | None = None,
    environ: Mapping[str, str] | None = None,
    eager_notifier: bool = True,
    docker: bool | None = None,
) -> Bot:
    """`environ` is the bot's own environment (default: this process's): child processes get its
    allow-listed part (`launch.base_env`); every secret in it or in the settings is redacted.
    `docker`: whether lanes need the local Docker daemon (default: when Harbor's environment is Docker;
    the playground's Harbor stand-in builds no image, so it passes False)."""
    clock = clock or SystemClock()
    environ = os.environ if environ is None else environ
    config = with_csb_default_parallel(settings.load_config(), environ, clock)
    redact = Redactor.from_env(environ, settings.secret_values(config))
    repo = settings.resolved_repo()
    store = Store(settings.csb_database_url)
    catalog = Catalog(repo)
    client = client or create_client(settings)
    launch = settings.launch_config(config, environ)
    bot_home = launch.base_env.get("HOME", os.path.expanduser("~"))  # account homes and CSB's usage cache
    engine = build_engine(
        store,
        launch,
        config.engine,
        clock,
        eager=eager_notifier,
        executor_settings=settings.executor(config),
        redact=redact,
        promotion_hold=environ.get(HOLD_ENV),
        policy=config.policy,
    )
    inflight = InFlight()
    notifier = Notifier(
        store,
        client,
        clock,
        config.notifier,
        config.policy,
        repo,
        eager=eager_notifier,
        may_deliver=lambda: engine.lease.held,  # one sender across bot processes, as for the timers
        before_round=inflight.answers_first,  # a burst's acks before its cards
    )
    replies = ReplyService(store, clock, direct=reply_now)
    spend = SpendService(store, config.policy, clock)
    checks = CheckRunner(
        repo,
        launch.base_env,
        daytona=launch.harbor_env.daytona,  # HARBOR_ENV or the setting
        redact=redact,
        timeout_s=config.engine.preflight_timeout_sec,
        docker=needs_docker(launch.harbor_env) if docker is None else docker,
        docker_ping_s=config.engine.docker_ping_sec,
        spend=spend,
    )
    requests = RunRequestService(store, catalog, checks, config.policy, config.engine, clock)
    approvals = ApprovalService(store, requests, checks, config.policy, config.engine, clock)
    directory = Directory(client, config.policy, clock)
    queries = QueryService(store, catalog, checks, config.policy)
    control = RunControlService(store, config.policy, clock, requests, repo)
    promotion = PromotionService(store, repo, config.policy, config.promote, clock)
    promotion_gate = PromotionGate(store, promotion, config.policy, clock)
    compare = CompareService(store, repo, config.policy)
    coverage = CoverageService(store, repo, config.policy, requests, clock)
    router = CommandRouter(
        requests,
        queries,
        replies,
        directory,
        launch=launch,
        control=control,
        promotion=promotion,
        promotion_gate=promotion_gate,
        compare=compare,
        coverage=coverage,
        spend=spend,
        accounts=AccountService(store, checks, config.policy, config.engine, clock, bot_home),
        client=client,
    )
    replays = ReplayGuard(store, clock)
    decisions = DecisionHandler(approvals, requests, replies, directory, client, replays)
    task_reruns = TaskRerunService(store, requests)
    restarts = LaneRestartService(store, config.policy, clock)
    clicks = RunControlClicks(control, replies, directory, client, replays, requests, task_reruns, restarts)
    identity = SlackIdentity(client, settings.slack_api_url)
    socket_mode = settings.slack_app_token is not None  # envelopes may come twice: act on one
    app = create_app(
        settings,
        client,
        router,
        decisions,
        notifier,
        inflight,
        HomeService(store, clock),
        clicks,
        PromotionClicks(promotion_gate, replies, directory, replays),
        CoverageClicks(coverage, replies, directory, replays),
        replays,
        identity,
        socket_mode=socket_mode,
    )
    return Bot(
        settings=settings,
        config=config,
        store=store,
        engine=engine,
        notifier=notifier,
        approvals=approvals,
        app=app,
        inflight=inflight,
        redact=redact,
        identity=identity,
        pruner=OutboxPruner(
            store,
            clock,
            timedelta(days=config.notifier.keep_sent_days),
            may_prune=lambda: engine.lease.held,  # one pruner across bot processes, as for the timers
        ),
    )
