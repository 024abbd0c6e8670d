"""The composition root: build every part from settings, with the clock and Slack client injected."""

from __future__ import annotations

import os
from dataclasses import dataclass

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.csb.catalog import Catalog
from bot.domain.clock import Clock, SystemClock
from bot.engine.dispatch import Dispatcher, LaunchConfig
from bot.engine.engine import Engine
from bot.engine.executor import LocalExecutor
from bot.engine.watch import Watcher
from bot.services.queries import QueryService
from bot.services.replies import ReplyService
from bot.services.requests import RunRequestService
from bot.settings import BotConfig, Settings
from bot.slack.app import create_app, create_client
from bot.slack.commands import CommandRouter
from bot.slack.decisions import DecisionHandler
from bot.slack.inflight import InFlight
from bot.slack.notifier import Notifier
from bot.store.db import Store


@dataclass
class Bot:
    settings: Settings
    config: BotConfig
    store: Store
    engine: Engine
    notifier: Notifier
    app: AsyncApp
    inflight: InFlight

    async def start(self) -> None:
        await self.store.create_tables()

    async def close(self) -> None:
        await self.engine.executor.wait_all()
        await self.store.close()


def build_bot(
    settings: Settings,
    *,
    clock: Clock | None = None,
    client: AsyncWebClient | None = None,
    eager_notifier: bool = True,
) -> Bot:
    clock = clock or SystemClock()
    config = settings.load_config()
    repo = settings.resolved_repo()
    store = Store(settings.csb_database_url)
    catalog = Catalog(repo)
    client = client or create_client(settings)
    executor = LocalExecutor()
    launch = LaunchConfig(
        repo=repo,
        harbor=settings.resolved_harbor(),
        base_env=dict(os.environ),
        timeout_multiplier=config.engine.timeout_multiplier,
        daytona=config.engine.daytona,
    )
    engine = Engine(
        Dispatcher(store, executor, launch, clock), Watcher(store, executor, repo, clock), executor
    )
    notifier = Notifier(store, client, clock, config.notifier, eager=eager_notifier)
    replies = ReplyService(store, clock)
    requests = RunRequestService(store, catalog, config.engine, clock)
    router = CommandRouter(requests, QueryService(store, catalog), replies, harbor=settings.resolved_harbor())
    inflight = InFlight()
    app = create_app(settings, client, router, DecisionHandler(requests, replies), notifier, inflight)
    return Bot(
        settings=settings,
        config=config,
        store=store,
        engine=engine,
        notifier=notifier,
        app=app,
        inflight=inflight,
    )
