"""The engine alone, without Slack: approved runs written straight into a real SQLite file, the example
bench's Harbor stand-in as real child processes, and a ManualClock the test moves. No timer runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_executor import FakeExecutor
from harness import HARBOR, copy_bench
from lane_waits import kill_all, wait_all
from sqlite_template import migrated_sqlite

from bot.csb.catalog import Catalog
from bot.csb.child_env import child_environ
from bot.csb.harbor_run import LaunchConfig
from bot.csb.trials import is_trial_folder
from bot.domain.clock import ManualClock
from bot.domain.redact import Redactor
from bot.domain.spec import Category, RunParams
from bot.engine import Engine, build_engine
from bot.executors.base import Executor, ExecutorContext, ExecutorSettings
from bot.executors.registry import LOCAL
from bot.services.run_plan import plan_run
from bot.settings import EngineConfig
from bot.store import runs
from bot.store.db import Store
from bot.store.models import Lane, RequestState, Run, RunRequest

# Quick retries and stops, so tests move the clock by seconds, not minutes.
FAST = {"retry_backoff_sec": 10, "retry_backoff_cap_sec": 40, "cancel_grace_sec": 5, "lease_ttl_sec": 20}


@dataclass
class EngineKit:
    tmp: Path
    repo: Path
    store: Store
    clock: ManualClock
    config: EngineConfig
    env: dict[str, str]
    harbor: str
    executor: ExecutorSettings = LOCAL
    # Builds each engine's executor instead of `executor` (the tests' FakeExecutor), if set.
    executor_for: Callable[[ExecutorContext], Executor] | None = None
    engines: list[Engine] = field(default_factory=list)
    redact: Redactor | None = None  # the bot's own (build_bot's); None: the secrets named in the lanes' env

    @property
    def script_path(self) -> Path:
        return self.tmp / "standin-script.json"

    def script(self, behaviours: Mapping[str, str]) -> None:
        """What the Harbor stand-in does per `<task>/<lane>` (read at each start, so it can change)."""
        self.script_path.write_text(json.dumps(dict(behaviours)))

    def new_engine(self, **config: Any) -> Engine:
        """Another engine on the same database, as a restarted (or a second) bot process would build."""
        cfg = self.config.model_copy(update=config) if config else self.config
        launch = LaunchConfig(
            repo=self.repo,
            harbor=self.harbor,
            base_env=child_environ(self.env),
            timeout_multiplier=10,
            daytona=False,
        )
        engine = build_engine(
            self.store,
            launch,
            cfg,
            self.clock,
            eager=False,
            executor_settings=self.executor,
            executor_for=self.executor_for,
            redact=self.redact,
        )
        self.engines.append(engine)
        return engine

    @property
    def fake(self) -> FakeExecutor:
        """The current engine's executor, in a kit made with `fake=True`."""
        executor = self.engine.executor
        assert isinstance(executor, FakeExecutor), "this kit runs real lanes (engine_kit(..., fake=True))"
        return executor

    @property
    def engine(self) -> Engine:
        return self.engines[0]

    async def approve(
        self, suite: str | None = "csb_sdlc_fix", *, parallel: int = 2, category: str = "staging", **more: Any
    ) -> int:
        """An approved request and its queued run, as the approval gate leaves them; returns the run id."""
        params = RunParams(suite=suite, parallel=parallel, category=Category(category), **more)
        spec = Catalog(self.repo).resolve(params, parallel)
        now = self.clock.now()
        async with self.store.write() as session:
            request = RunRequest(
                spec_json=spec.model_dump_json(),
                spec_hash=spec.spec_hash(),
                requester="U0ALICE",
                channel_id="C0PLAY",
                created_at=now,
                category=category,
                state=RequestState.APPROVED,
            )
            session.add(request)
            await session.flush()
            assert request.id is not None
            run, lanes = plan_run(
                spec,
                request.id,
                now,
                timeout_multiplier=10,
                default_timeout_sec=self.config.default_lane_timeout_sec,
            )
            await runs.create_run(session, run, lanes)
            return request.id

    async def lanes(self, run_id: int) -> list[Lane]:
        async with self.store.read() as session:
            return await runs.run_lanes(session, run_id)

    async def run(self, run_id: int) -> Run:
        async with self.store.read() as session:
            found = await runs.get_run(session, run_id)
        assert found is not None
        return found

    async def states(self, run_id: int) -> dict[tuple[str, str], str]:
        return {(lane.task_id, lane.role): lane.state.value for lane in await self.lanes(run_id)}

    def trial_dirs(self) -> list[Path]:
        """Every trial folder Harbor made, retried attempts included: one per start of a lane."""
        return trial_dirs(self.repo)


def make_accounts(tmp_path: Path, *names: str, minutes: float = 7 * 24 * 60) -> Path:
    """Account homes under the kit's HOME, each with Claude credentials whose token has `minutes` left
    on the kit's clock (ManualClock's start); returns the folder holding them."""
    homes = tmp_path / "home" / ".claude-homes"
    expires_ms = int((ManualClock().now().timestamp() + minutes * 60) * 1000)
    for name in names:
        credentials = homes / name / ".claude" / ".credentials.json"
        credentials.parent.mkdir(parents=True, exist_ok=True)
        credentials.write_text(
            json.dumps({"claudeAiOauth": {"accessToken": "sk-ant-oat-test", "expiresAt": expires_ms}})
        )
    return homes


def trial_dirs(repo: Path) -> list[Path]:
    return sorted(p for p in (repo / "runs").rglob("*__*") if p.is_dir() and is_trial_folder(p.name))


@asynccontextmanager
async def engine_kit(
    tmp_path: Path,
    *,
    url: str | None = None,
    harbor: Path | None = None,
    executor: ExecutorSettings = LOCAL,
    fake: bool = False,
    redact: Redactor | None = None,
    **config: Any,
) -> AsyncIterator[EngineKit]:
    """`url`: the database (the `db_url` fixture's, to run on SQLite and PostgreSQL); SQLite by default.
    `executor`: where lanes run (this host's processes by default); `fake`: nowhere, a `FakeExecutor`
    records what it is handed and the test ends lanes itself."""
    repo = copy_bench(tmp_path)
    store = Store(url or migrated_sqlite(tmp_path / "bot.db"))
    await store.create_tables()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "HARBOR_STANDIN_SCRIPT": str(tmp_path / "standin-script.json")}
    kit = EngineKit(
        tmp=tmp_path,
        repo=repo,
        store=store,
        clock=ManualClock(),
        config=EngineConfig(**{**FAST, **config}),
        env=env,
        harbor=str(harbor or HARBOR),
        executor=executor,
        executor_for=FakeExecutor if fake else None,
        redact=redact,
    )
    kit.script({})
    kit.new_engine()
    try:
        yield kit
    except BaseException:
        for engine in kit.engines:
            await kill_all(engine, store)  # a failed test must not wait for lanes that hang by design
        raise
    finally:
        for engine in kit.engines:
            await wait_all(engine.executor)
            await engine.executor.close()
        await store.close()
