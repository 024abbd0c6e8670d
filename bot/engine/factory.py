"""Build the engine from its parts: one executor, one lease, one account pool per bot process.

The executor comes from `bot.executors.registry` by the kind its settings name; the engine knows it
only as `Executor`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from bot.csb.catalog import Catalog
from bot.csb.harbor_run import LaunchConfig
from bot.domain.clock import Clock
from bot.domain.policy import PolicyConfig
from bot.domain.redact import Redactor
from bot.engine.accounts import account_pool
from bot.engine.after_batch import AfterBatchRunner
from bot.engine.budget_drain import BudgetDrain
from bot.engine.dispatch import Dispatcher
from bot.engine.engine import Engine
from bot.engine.lease import LeaseKeeper
from bot.engine.orphans import OrphanWatch
from bot.engine.pinning import LaunchPins
from bot.engine.promotion_fence import PromotionFence
from bot.engine.promotion_runner import PromotionRunner
from bot.engine.reconcile import Reconciler
from bot.engine.watch import Watcher
from bot.executors.base import Executor, ExecutorContext, ExecutorSettings
from bot.executors.registry import LOCAL, build_executor
from bot.settings import EngineConfig
from bot.store.db import Store


def build_engine(
    store: Store,
    launch: LaunchConfig,
    config: EngineConfig,
    clock: Clock,
    *,
    eager: bool,
    executor_settings: ExecutorSettings = LOCAL,
    executor_for: Callable[[ExecutorContext], Executor] | None = None,
    redact: Redactor | None = None,
    promotion_hold: str | None = None,
    policy: PolicyConfig | None = None,
) -> Engine:
    """`eager=False` leaves every tick to the caller (tests move the clock and tick themselves).
    Lanes run on the executor `executor_settings` name, unless `executor_for` builds one (a test's).
    `redact` hides the bot's secrets in what Harbor's logs and CSB's scripts say (default: the
    secrets named in the lanes' environment). `promotion_hold`: the test-only stop of promotions
    (`bot.engine.promotion_runner.HOLD_ENV`). `policy`: its monthly budgets drain runs past their
    block line."""
    home = launch.base_env.get("HOME") or str(Path.home())
    pool = account_pool(config, home)
    lease = LeaseKeeper(store, clock, config.lease_ttl_sec, pool.slots)
    context = ExecutorContext(launch.repo, lease.claimant.host, clock, config.cancel_grace_sec)
    executor = executor_for(context) if executor_for else build_executor(executor_settings, context)
    redact = redact or Redactor.from_env(launch.base_env)
    dispatcher = Dispatcher(store, executor, launch, clock, config, pool, lease.claimant, redact)
    watcher = Watcher(store, executor, launch.repo, clock, config, redact)
    reconciler = Reconciler(store, executor, launch.repo, clock, timedelta(seconds=config.spawn_grace_sec))
    pins = LaunchPins(store, Catalog(launch.repo), clock, redact)
    after_batch = AfterBatchRunner(store, launch.repo, launch.base_env, clock, redact)
    fence = PromotionFence(store, lease, clock)
    promotions = PromotionRunner(store, launch.repo, launch.base_env, clock, redact, fence, promotion_hold)
    return Engine(
        store,
        clock,
        dispatcher,
        watcher,
        reconciler,
        pins,
        lease,
        executor,
        after_batch,
        promotions,
        eager=eager,
        budgets=BudgetDrain(policy) if policy is not None else None,
        orphans=OrphanWatch(store, launch.repo, lease.claimant.host),
    )
