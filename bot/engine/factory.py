"""Build the engine from its parts: one executor, one lease, one account pool per bot process.

This is the one module that names a concrete executor; everything else knows it as `Executor`.
"""

from __future__ import annotations

from pathlib import Path

from bot.csb.catalog import Catalog
from bot.csb.command import LaunchConfig
from bot.domain.clock import Clock
from bot.domain.redact import Redactor
from bot.engine.accounts import account_pool
from bot.engine.after_batch import AfterBatchRunner
from bot.engine.dispatch import Dispatcher
from bot.engine.engine import Engine
from bot.engine.executor import Executor
from bot.engine.lease import LeaseKeeper
from bot.engine.local_executor import LocalExecutor
from bot.engine.pinning import LaunchPins
from bot.engine.ray_executor import RayExecutor
from bot.engine.reconcile import Reconciler
from bot.engine.watch import Watcher
from bot.settings import EngineConfig, ExecutorChoice
from bot.store.db import Store

LOCAL = ExecutorChoice(kind="local")


def build_engine(
    store: Store,
    launch: LaunchConfig,
    config: EngineConfig,
    clock: Clock,
    *,
    eager: bool,
    executor_choice: ExecutorChoice = LOCAL,
    redact: Redactor | None = None,
) -> Engine:
    """`eager=False` leaves every tick to the caller (tests move the clock and tick themselves).
    `redact` hides the bot's secrets in what Harbor's logs and CSB's scripts say (default: the
    secrets named in the lanes' environment)."""
    home = launch.base_env.get("HOME") or str(Path.home())
    pool = account_pool(config, home)
    lease = LeaseKeeper(store, clock, config.lease_ttl_sec, pool.slots)
    executor = build_executor(executor_choice, launch, lease.claimant.host, config, clock)
    redact = redact or Redactor.from_env(launch.base_env)
    dispatcher = Dispatcher(store, executor, launch, clock, config, pool, lease.claimant, redact)
    watcher = Watcher(store, executor, launch.repo, clock, config, redact)
    reconciler = Reconciler(store, executor, launch.repo, clock)
    pins = LaunchPins(store, Catalog(launch.repo), clock, redact)
    after_batch = AfterBatchRunner(store, launch.repo, launch.base_env, clock, redact)
    return Engine(
        store, clock, dispatcher, watcher, reconciler, pins, lease, executor, after_batch, eager=eager
    )


def build_executor(
    choice: ExecutorChoice, launch: LaunchConfig, host: str, config: EngineConfig, clock: Clock
) -> Executor:
    """The executor lanes run on: Harbor child processes of this bot on this host (`local`), or one
    job per lane on a Ray cluster (`ray`), stopped with the same grace period."""
    if choice.kind == "local":
        return LocalExecutor(launch.repo, host)
    return RayExecutor.for_cluster(choice, launch.repo, clock, grace_sec=config.cancel_grace_sec)
